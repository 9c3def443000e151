package telephony

import (
	"slices"
	"strings"

	"github.com/convengine/engine"
)

// lineTexts are what the phone says of its own in one language: the tenant's answers come in
// the caller's language from the model, these are the line's. "{name}" is the tenant's name.
type lineTexts struct {
	ourBank, welcome, pinAgain, pinMissing, verified, notVerified, noVerifier, busy,
	confirmPIN, confirmInApp, cancelled, confirmWrong, actionFailed, turnRefused, notHeard,
	closing string
}

// lineLanguages are the languages the line speaks; a tenant whose locale is none of them
// hears English.
var lineLanguages = map[string]*lineTexts{
	"en": {
		ourBank:      "our bank",
		welcome:      "Welcome to {name}. Please enter your PIN on the keypad, then press the pound key.",
		pinAgain:     "That PIN didn't match. Please enter it again, then press the pound key.",
		pinMissing:   "I didn't get your PIN. Please enter it on the keypad, then press the pound key.",
		verified:     "Thank you. How can I help you today?",
		notVerified:  "I couldn't verify you. Please call again later. Goodbye.",
		noVerifier:   "Sorry, I can't verify callers right now. Please call again later. Goodbye.",
		busy:         "Sorry, all our lines are busy. Please call again in a few minutes. Goodbye.",
		confirmPIN:   "To confirm, enter your PIN, then press the pound key. To cancel, press the star key.",
		confirmInApp: "For your security, please confirm this in the {name} app. I can't do it on the phone.",
		cancelled:    "All right, I cancelled it. Nothing was sent.",
		confirmWrong: "That PIN didn't match, so nothing was done.",
		actionFailed: "Sorry, that couldn't be done just now. Nothing was sent.",
		turnRefused:  "Sorry, I can't answer right now. Please try again in a moment.",
		notHeard:     "Sorry, I didn't catch that. Please say it again.",
		closing:      "This line is closing for maintenance. Please call again in a moment. Goodbye.",
	},
	"es": {
		ourBank:      "nuestro banco",
		welcome:      "Bienvenido a {name}. Introduzca su PIN en el teclado y después pulse la tecla numeral.",
		pinAgain:     "Ese PIN no coincide. Introdúzcalo de nuevo y después pulse la tecla numeral.",
		pinMissing:   "No he recibido su PIN. Introdúzcalo en el teclado y después pulse la tecla numeral.",
		verified:     "Gracias. ¿En qué puedo ayudarle hoy?",
		notVerified:  "No he podido verificar su identidad. Por favor, llame más tarde. Adiós.",
		noVerifier:   "Lo siento, ahora no puedo verificar su identidad. Por favor, llame más tarde. Adiós.",
		busy:         "Lo siento, todas nuestras líneas están ocupadas. Por favor, llame de nuevo en unos minutos. Adiós.",
		confirmPIN:   "Para confirmar, introduzca su PIN y después pulse la tecla numeral. Para cancelar, pulse la tecla asterisco.",
		confirmInApp: "Por su seguridad, confirme esta operación en la aplicación de {name}. No puedo hacerlo por teléfono.",
		cancelled:    "De acuerdo, la he cancelado. No se ha enviado nada.",
		confirmWrong: "Ese PIN no coincide, así que no se ha hecho nada.",
		actionFailed: "Lo siento, no se ha podido hacer en este momento. No se ha enviado nada.",
		turnRefused:  "Lo siento, ahora no puedo responder. Por favor, inténtelo de nuevo en un momento.",
		notHeard:     "Lo siento, no le he entendido. ¿Puede repetirlo?",
		closing:      "Esta línea se cierra por mantenimiento. Por favor, llame de nuevo en un momento. Adiós.",
	},
	"ar": {
		ourBank:      "بنكنا",
		welcome:      "مرحبًا بك في {name}. يرجى إدخال رمز التعريف الشخصي على لوحة المفاتيح، ثم الضغط على مفتاح المربع.",
		pinAgain:     "رمز التعريف الشخصي غير صحيح. يرجى إدخاله مرة أخرى، ثم الضغط على مفتاح المربع.",
		pinMissing:   "لم يصلني رمز التعريف الشخصي. يرجى إدخاله على لوحة المفاتيح، ثم الضغط على مفتاح المربع.",
		verified:     "شكرًا لك. كيف يمكنني مساعدتك اليوم؟",
		notVerified:  "تعذّر التحقق من هويتك. يرجى الاتصال لاحقًا. مع السلامة.",
		noVerifier:   "عذرًا، لا يمكنني التحقق من هوية المتصلين الآن. يرجى الاتصال لاحقًا. مع السلامة.",
		busy:         "عذرًا، جميع خطوطنا مشغولة. يرجى الاتصال مرة أخرى بعد بضع دقائق. مع السلامة.",
		confirmPIN:   "للتأكيد، أدخل رمز التعريف الشخصي ثم اضغط على مفتاح المربع. للإلغاء، اضغط على مفتاح النجمة.",
		confirmInApp: "حفاظًا على أمانك، يرجى تأكيد هذه العملية في تطبيق {name}. لا يمكنني تنفيذها عبر الهاتف.",
		cancelled:    "حسنًا، ألغيت العملية. لم يُرسل أي شيء.",
		confirmWrong: "رمز التعريف الشخصي غير صحيح، لذلك لم يُنفَّذ أي شيء.",
		actionFailed: "عذرًا، تعذّر تنفيذ ذلك الآن. لم يُرسل أي شيء.",
		turnRefused:  "عذرًا، لا يمكنني الرد الآن. يرجى المحاولة مرة أخرى بعد قليل.",
		notHeard:     "عذرًا، لم أفهم ذلك. هل يمكنك تكراره؟",
		closing:      "سيُغلق هذا الخط للصيانة. يرجى الاتصال مرة أخرى بعد قليل. مع السلامة.",
	},
}

// linesFor returns the line's texts in the tenant's language: its locale, else the locale's
// language, else English.
func linesFor(t *engine.Tenant) *lineTexts {
	for _, loc := range engine.LocaleFallbacks(strings.ToLower(t.Locale)) {
		if l, ok := lineLanguages[loc]; ok {
			return l
		}
	}
	return lineLanguages["en"]
}

// linesOf returns what the line of e says: the tenant's prompts (Config.Prompts) where it
// reworded them, else the texts of its language, with its name in them.
func linesOf(e Entry) *lineTexts {
	l := *linesFor(e.Tenant)
	if e.Config != nil {
		for key, text := range e.Config.Prompts {
			if f := l.field(key); f != nil {
				*f = text
			}
		}
	}
	name := e.Tenant.Name
	if name == "" {
		name = l.ourBank
	}
	for _, f := range l.fields() {
		*f = strings.ReplaceAll(*f, "{name}", name)
	}
	return &l
}

// promptKeys are the names of the prompts a tenant may reword, as its tenants file spells them.
var promptKeys = []string{"welcome", "pin_again", "pin_missing", "verified", "not_verified", "no_verifier", "busy",
	"confirm_pin", "confirm_in_app", "cancelled", "confirm_wrong", "action_failed", "turn_refused", "not_heard", "closing"}

// fields are l's prompts, in promptKeys' order.
func (l *lineTexts) fields() []*string {
	return []*string{&l.welcome, &l.pinAgain, &l.pinMissing, &l.verified, &l.notVerified, &l.noVerifier, &l.busy,
		&l.confirmPIN, &l.confirmInApp, &l.cancelled, &l.confirmWrong, &l.actionFailed, &l.turnRefused, &l.notHeard, &l.closing}
}

// field is the prompt of l that key names, nil for none.
func (l *lineTexts) field(key string) *string {
	if i := slices.Index(promptKeys, key); i >= 0 {
		return l.fields()[i]
	}
	return nil
}

// greetingText is what a call of e hears first: the tenant's AI disclosure, its welcome and
// the PIN's prompt.
func greetingText(e Entry) string {
	text := linesOf(e).welcome
	if d := disclosure(e.Tenant); d != "" {
		text = d + " " + text
	}
	return text
}

// disclosure is the tenant's AI disclosure in its language: its locale, else the locale's
// language, else English.
func disclosure(t *engine.Tenant) string {
	if len(t.Disclosure) == 0 {
		return ""
	}
	loc := t.Locale
	if d, ok := t.Disclosure[loc]; ok {
		return d
	}
	for i := range len(loc) {
		if loc[i] == '-' || loc[i] == '_' {
			if d, ok := t.Disclosure[loc[:i]]; ok {
				return d
			}
			break
		}
	}
	return t.Disclosure["en"]
}
