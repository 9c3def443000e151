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

func localized(lines map[string]string, locale string) string {
	s, _ := lookupLocale(lines, locale, "en")
	return s
}
