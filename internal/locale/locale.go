// Package locale knows BCP 47 locale tags as the engine uses them: their shape, their writing
// direction, their fallbacks, and the lines the engine itself speaks in each. It also reads the
// decimal digits of every script ([DigitValue]), for the detector of personal data (pii) and
// the text written for the ear (verbalize) alike.
package locale

import (
	"regexp"
	"strings"
)

// localePattern accepts well-formed BCP 47 tags in their common shape: a language of 2 to 8
// letters and subtags of 1 to 8 letters or digits.
var localePattern = regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,8}$`)

// Valid reports whether tag has the shape of a BCP 47 language tag, such as "es-MX".
func Valid(tag string) bool { return len(tag) <= 64 && localePattern.MatchString(tag) }

// rtlScripts are the ISO 15924 codes of scripts written right to left.
var rtlScripts = map[string]bool{
	"arab": true, "aran": true, "hebr": true, "thaa": true, "syrc": true, "syre": true,
	"syrj": true, "syrn": true, "nkoo": true, "adlm": true, "rohg": true, "mand": true,
	"samr": true, "mend": true, "armi": true, "avst": true, "phnx": true, "sogd": true,
	"yezi": true, "chrs": true, "elym": true, "hatr": true, "mani": true, "nbat": true,
	"narb": true, "orkh": true, "palm": true, "phli": true, "phlp": true, "prti": true,
	"sarb": true, "sogo": true, "khar": true, "lydi": true, "cprt": true, "hung": true,
}

// rtlLanguages are languages whose default script is written right to left.
var rtlLanguages = map[string]bool{
	"ar": true, "he": true, "iw": true, "fa": true, "ur": true, "ps": true, "sd": true,
	"ug": true, "yi": true, "ji": true, "dv": true, "ckb": true, "syr": true, "nqo": true,
	"arc": true, "ks": true, "ku-arab": true, "mzn": true, "glk": true, "lrc": true,
	"bal": true, "bqi": true, "pnb": true, "skr": true, "prs": true, "azb": true,
	"arz": true, "ary": true, "apc": true, "acm": true, "aeb": true, "ajp": true,
	"apd": true, "arq": true, "ayl": true, "shu": true, "ha-arab": true, "sam": true,
	"fa-af": true, "tk-arab": true, "bgn": true, "hnd": true, "khw": true,
	"pa-pk": true, "sdh": true, "hac": true,
}

// Direction returns "rtl" when locale is written right to left and "ltr" otherwise. An explicit
// script subtag decides ("az-Arab" is rtl, "ku-Latn" is ltr); otherwise the language does.
func Direction(locale string) string {
	parts := strings.Split(strings.ToLower(locale), "-")
	if parts[0] == "" {
		return "ltr"
	}
	for _, p := range parts[1:] {
		if len(p) == 4 && p[0] >= 'a' && p[0] <= 'z' {
			if rtlScripts[p] {
				return "rtl"
			}
			return "ltr"
		}
	}
	if len(parts) > 1 && rtlLanguages[parts[0]+"-"+parts[1]] {
		return "rtl"
	}
	if rtlLanguages[parts[0]] {
		return "rtl"
	}
	return "ltr"
}

// Fallbacks returns locale followed by its shorter prefixes: "pt-BR-x" gives
// "pt-BR-x", "pt-BR", "pt". Lookups of per-locale copy try them in order.
func Fallbacks(locale string) []string {
	var out []string
	for locale != "" {
		out = append(out, locale)
		i := strings.LastIndexByte(locale, '-')
		if i < 0 {
			break
		}
		locale = locale[:i]
	}
	return out
}

// Lookup finds the entry of m for locale, trying its fallbacks, then def and its fallbacks.
// Keys are compared case-insensitively.
func Lookup[V any](m map[string]V, locale, def string) (V, bool) {
	for _, tag := range append(Fallbacks(locale), Fallbacks(def)...) {
		for k, v := range m {
			if strings.EqualFold(k, tag) {
				return v, true
			}
		}
	}
	var zero V
	return zero, false
}

// Lines the engine itself speaks, by language. A locale missing here falls back to its
// language, then to English.
var (
	apologyLines = map[string]string{
		"en": "Sorry, something went wrong. Please try again.",
		"es": "Lo siento, algo salió mal. Inténtalo de nuevo.",
		"fr": "Désolé, un problème est survenu. Veuillez réessayer.",
		"de": "Entschuldigung, etwas ist schiefgelaufen. Bitte versuche es noch einmal.",
		"pt": "Desculpe, algo deu errado. Tente novamente.",
		"it": "Spiacente, qualcosa è andato storto. Riprova.",
		"ar": "عذرًا، حدث خطأ ما. يرجى المحاولة مرة أخرى.",
		"he": "מצטערים, משהו השתבש. נסו שוב.",
		"fa": "متأسفیم، مشکلی پیش آمد. لطفاً دوباره تلاش کنید.",
		"ur": "معذرت، کچھ غلط ہو گیا۔ براہ کرم دوبارہ کوشش کریں۔",
	}
	refusalLines = map[string]string{
		"en": "Sorry, I can't help with that.",
		"es": "Lo siento, no puedo ayudar con eso.",
		"fr": "Désolé, je ne peux pas vous aider avec cela.",
		"de": "Entschuldigung, dabei kann ich nicht helfen.",
		"pt": "Desculpe, não posso ajudar com isso.",
		"it": "Spiacente, non posso aiutarti con questo.",
		"ar": "عذرًا، لا يمكنني المساعدة في ذلك.",
		"he": "מצטערים, איני יכול לעזור בזה.",
	}
	unclearLines = map[string]string{
		"en": "Sorry, I didn't catch that. Could you say it again?",
		"es": "Perdona, no te he entendido. ¿Puedes repetirlo?",
		"fr": "Désolé, je n'ai pas compris. Pouvez-vous répéter ?",
		"de": "Entschuldigung, das habe ich nicht verstanden. Kannst du es wiederholen?",
		"pt": "Desculpe, não entendi. Pode repetir?",
		"it": "Scusa, non ho capito. Puoi ripetere?",
		"ar": "عذرًا، لم أفهم ذلك. هل يمكنك تكراره؟",
		"he": "סליחה, לא הבנתי. אפשר לחזור על זה?",
	}
	workingLines = map[string]string{
		"en": "Working on it",
		"es": "Un momento",
		"fr": "Un instant",
		"de": "Einen Moment",
		"pt": "Um momento",
		"it": "Un momento",
		"ar": "لحظة من فضلك",
		"he": "רק רגע",
	}
)

// Card copy when the tenant wrote none for the locale.
var (
	doneCopy = map[string]Card{
		"en": {Title: "Done", Speak: "Done."},
		"es": {Title: "Hecho", Speak: "Hecho."},
		"fr": {Title: "Terminé", Speak: "C'est fait."},
		"de": {Title: "Erledigt", Speak: "Erledigt."},
		"pt": {Title: "Concluído", Speak: "Concluído."},
		"ar": {Title: "تم", Speak: "تم."},
		"he": {Title: "בוצע", Speak: "בוצע."},
	}
	// unknownOutcomeCopy is the card of an action whose backend did not say whether it ran it.
	unknownOutcomeCopy = map[string]Card{
		"en": {Title: "Not confirmed", Line1: "The service did not confirm it.", Line2: "Check your account before you try again.",
			Speak: "I couldn't confirm that it went through. Please check your account before you try again."},
		"es": {Title: "Sin confirmar", Line1: "El servicio no lo confirmó.", Line2: "Revisa tu cuenta antes de volver a intentarlo.",
			Speak: "No pude confirmar que se hiciera. Revisa tu cuenta antes de volver a intentarlo."},
		"fr": {Title: "Non confirmé", Line1: "Le service ne l'a pas confirmé.", Line2: "Vérifiez votre compte avant de réessayer.",
			Speak: "Je n'ai pas pu confirmer que c'est fait. Vérifiez votre compte avant de réessayer."},
		"de": {Title: "Nicht bestätigt", Line1: "Der Dienst hat es nicht bestätigt.", Line2: "Prüfe dein Konto, bevor du es erneut versuchst.",
			Speak: "Ich konnte nicht bestätigen, dass es geklappt hat. Prüfe dein Konto, bevor du es erneut versuchst."},
		"pt": {Title: "Não confirmado", Line1: "O serviço não confirmou.", Line2: "Verifique sua conta antes de tentar de novo.",
			Speak: "Não consegui confirmar que foi feito. Verifique sua conta antes de tentar de novo."},
		"ar": {Title: "لم يتم التأكيد", Line1: "لم تؤكد الخدمة العملية.", Line2: "تحقق من حسابك قبل المحاولة مرة أخرى.",
			Speak: "لم أتمكن من تأكيد إتمام العملية. تحقق من حسابك قبل المحاولة مرة أخرى."},
		"he": {Title: "לא אושר", Line1: "השירות לא אישר את הפעולה.", Line2: "בדקו את החשבון לפני שתנסו שוב.",
			Speak: "לא הצלחתי לאשר שהפעולה בוצעה. בדקו את החשבון לפני שתנסו שוב."},
	}
	declinedCopy = map[string]Card{
		"en": {Title: "Not completed", Line1: "{result.message}", Speak: "That could not be done. {result.message}"},
		"es": {Title: "No completado", Line1: "{result.message}", Speak: "No se pudo hacer. {result.message}"},
		"fr": {Title: "Non effectué", Line1: "{result.message}", Speak: "Cela n'a pas pu être fait. {result.message}"},
		"de": {Title: "Nicht ausgeführt", Line1: "{result.message}", Speak: "Das ging nicht. {result.message}"},
		"pt": {Title: "Não concluído", Line1: "{result.message}", Speak: "Não foi possível. {result.message}"},
		"ar": {Title: "لم يكتمل", Line1: "{result.message}", Speak: "تعذر ذلك. {result.message}"},
		"he": {Title: "לא בוצע", Line1: "{result.message}", Speak: "לא ניתן היה לבצע. {result.message}"},
	}
)

// Card is the copy of a result card: its title, two lines and what is spoken.
type Card struct{ Title, Line1, Line2, Speak string }

// Apology, Refusal, Unclear and Working return the engine's own lines in locale (or its
// language, or English): after a failure, for a refused request, for speech not understood,
// and while a tool runs.
func Apology(locale string) string { return localized(apologyLines, locale) }
func Refusal(locale string) string { return localized(refusalLines, locale) }
func Unclear(locale string) string { return localized(unclearLines, locale) }
func Working(locale string) string { return localized(workingLines, locale) }

// Done, Declined and UnknownOutcome return the card of an action in locale when the tenant
// wrote none: it ran, the backend declined it, the backend did not say whether it ran it.
func Done(locale string) Card           { return localized(doneCopy, locale) }
func Declined(locale string) Card       { return localized(declinedCopy, locale) }
func UnknownOutcome(locale string) Card { return localized(unknownOutcomeCopy, locale) }

func localized[V any](lines map[string]V, locale string) V {
	v, _ := Lookup(lines, locale, "en")
	return v
}
