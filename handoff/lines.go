package handoff

import (
	"strings"
)

// What the engine says of a handoff, in each language the demo speaks; {agent} and {hours}
// are filled in.
var lines = map[string]map[string]string{
	"queued": {
		"en": "I'm putting you through to a person. Stay here: they'll write to you in this conversation.",
		"es": "Te paso con una persona. Quédate aquí: te escribirá en esta conversación.",
		"ar": "سأحوّلك إلى أحد موظفينا. ابقَ هنا: سيكتب إليك في هذه المحادثة.",
	},
	"already": {
		"en": "You're already waiting for a person; they'll write to you here.",
		"es": "Ya estás esperando a una persona; te escribirá aquí.",
		"ar": "أنت في انتظار أحد موظفينا بالفعل؛ سيكتب إليك هنا.",
	},
	"unavailable": {
		"en": "I can't put you through to a person here, but I'm happy to keep helping.",
		"es": "Aquí no puedo pasarte con una persona, pero sigo encantado de ayudarte.",
		"ar": "لا يمكنني تحويلك إلى موظف هنا، لكن يسعدني أن أواصل مساعدتك.",
	},
	"closed": {
		"en": "Our team isn't available right now; they are there {hours}. I can keep helping in the meantime.",
		"es": "Nuestro equipo no está disponible ahora; atiende {hours}. Mientras tanto, sigo ayudándote.",
		"ar": "فريقنا غير متاح الآن؛ يعمل {hours}. يمكنني مواصلة مساعدتك في الأثناء.",
	},
	"too_many": {
		"en": "You've asked for a person several times in a short while; please try again later. I can keep helping meanwhile.",
		"es": "Has pedido una persona varias veces en poco tiempo; inténtalo más tarde. Mientras tanto, sigo ayudándote.",
		"ar": "طلبت التحدث إلى موظف عدة مرات خلال وقت قصير؛ حاول لاحقًا. يمكنني مواصلة مساعدتك في الأثناء.",
	},
	"joined": {
		"en": "{agent} has joined the conversation.",
		"es": "{agent} se ha unido a la conversación.",
		"ar": "انضم {agent} إلى المحادثة.",
	},
	"sent": {
		"en": "Sent to {agent}.",
		"es": "Enviado a {agent}.",
		"ar": "أُرسلت إلى {agent}.",
	},
	"released": {
		"en": "{agent} has handed you back to the assistant. How else can I help?",
		"es": "{agent} te ha devuelto al asistente. ¿En qué más puedo ayudarte?",
		"ar": "أعادك {agent} إلى المساعد. كيف يمكنني مساعدتك أيضًا؟",
	},
	"failed": {
		"en": "Sorry, no one could take the conversation just now. I'm back, and happy to keep helping.",
		"es": "Lo siento, nadie pudo atender la conversación ahora. Vuelvo a estar aquí para ayudarte.",
		"ar": "عذرًا، لم يتمكن أحد من استلام المحادثة الآن. عدت إليك ويسعدني مواصلة المساعدة.",
	},
	"person": {
		"en": "a person",
		"es": "una persona",
		"ar": "أحد موظفينا",
	},
}

// line returns the line named key in locale (its language, else English), filled.
func line(key, locale string, fill ...string) string {
	m := lines[key]
	s, ok := m[strings.ToLower(locale)]
	if !ok {
		lang, _, _ := strings.Cut(strings.ToLower(locale), "-")
		if s, ok = m[lang]; !ok {
			s = m["en"]
		}
	}
	return strings.NewReplacer(fill...).Replace(s)
}

// hoursText describes office hours for the closed line.
func hoursText(h *Hours) string {
	days := "every day"
	if len(h.Days) > 0 {
		days = strings.Join(h.Days, ", ")
	}
	zone := h.Zone
	if zone == "" {
		zone = "UTC"
	}
	return days + ", " + h.Open + "–" + h.Close + " (" + zone + ")"
}
