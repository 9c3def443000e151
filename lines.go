package engine

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
	doneCopy = map[string]CardCopy{
		"en": {Title: "Done", Speak: "Done."},
		"es": {Title: "Hecho", Speak: "Hecho."},
		"fr": {Title: "Terminé", Speak: "C'est fait."},
		"de": {Title: "Erledigt", Speak: "Erledigt."},
		"pt": {Title: "Concluído", Speak: "Concluído."},
		"ar": {Title: "تم", Speak: "تم."},
		"he": {Title: "בוצע", Speak: "בוצע."},
	}
	declinedCopy = map[string]CardCopy{
		"en": {Title: "Not completed", Line1: "{result.message}", Speak: "That could not be done. {result.message}"},
		"es": {Title: "No completado", Line1: "{result.message}", Speak: "No se pudo hacer. {result.message}"},
		"fr": {Title: "Non effectué", Line1: "{result.message}", Speak: "Cela n'a pas pu être fait. {result.message}"},
		"de": {Title: "Nicht ausgeführt", Line1: "{result.message}", Speak: "Das ging nicht. {result.message}"},
		"pt": {Title: "Não concluído", Line1: "{result.message}", Speak: "Não foi possível. {result.message}"},
		"ar": {Title: "لم يكتمل", Line1: "{result.message}", Speak: "تعذر ذلك. {result.message}"},
		"he": {Title: "לא בוצע", Line1: "{result.message}", Speak: "לא ניתן היה לבצע. {result.message}"},
	}
)

func localized[V any](lines map[string]V, locale string) V {
	v, _ := lookupLocale(lines, locale, "en")
	return v
}
