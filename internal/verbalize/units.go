package verbalize

// with files the tables each concept keeps per language into l.
func (l *language) with(tag string) *language {
	l.abbrs = abbreviations[tag]
	l.units = unitNames[tag]
	l.nouns = nounGenders[tag]
	l.scales = scaleWords[tag]
	l.currencies = currencyNames[tag]
	return l
}

// unitNames are the units read after a number ("5 km", "20°C"). "m" and "g" are left out:
// after a number they are as often minutes, millions or a network.
var unitNames = map[string]map[string]noun{
	"en": {
		"km": nm("kilometer", "kilometers"), "kg": nm("kilogram", "kilograms"),
		"cm": nm("centimeter", "centimeters"), "mm": nm("millimeter", "millimeters"),
		"mg": nm("milligram", "milligrams"), "ml": nm("milliliter", "milliliters"),
		"km/h": nm("kilometer per hour", "kilometers per hour"), "mph": nm("mile per hour", "miles per hour"),
		"°C": nm("degree Celsius", "degrees Celsius"), "°F": nm("degree Fahrenheit", "degrees Fahrenheit"),
		"°": nm("degree", "degrees"),
	},
	"es": {
		"km": nm("kilómetro", "kilómetros"), "kg": nm("kilogramo", "kilogramos"),
		"cm": nm("centímetro", "centímetros"), "mm": nm("milímetro", "milímetros"),
		"mg": nm("miligramo", "miligramos"), "ml": nm("mililitro", "mililitros"),
		"km/h": nm("kilómetro por hora", "kilómetros por hora"), "mph": nf("milla por hora", "millas por hora"),
		"°C": nm("grado Celsius", "grados Celsius"), "°F": nm("grado Fahrenheit", "grados Fahrenheit"),
		"°": nm("grado", "grados"),
	},
	"fr": {
		"km": nm("kilomètre", "kilomètres"), "kg": nm("kilogramme", "kilogrammes"),
		"cm": nm("centimètre", "centimètres"), "mm": nm("millimètre", "millimètres"),
		"mg": nm("milligramme", "milligrammes"), "ml": nm("millilitre", "millilitres"),
		"km/h": nm("kilomètre par heure", "kilomètres par heure"), "mph": nm("mile par heure", "miles par heure"),
		"°C": nm("degré Celsius", "degrés Celsius"), "°F": nm("degré Fahrenheit", "degrés Fahrenheit"),
		"°": nm("degré", "degrés"),
	},
	"de": {
		"km": nm("Kilometer", "Kilometer"), "kg": nm("Kilogramm", "Kilogramm"),
		"cm": nm("Zentimeter", "Zentimeter"), "mm": nm("Millimeter", "Millimeter"),
		"mg": nm("Milligramm", "Milligramm"), "ml": nm("Milliliter", "Milliliter"),
		"km/h": nm("Kilometer pro Stunde", "Kilometer pro Stunde"), "mph": nf("Meile pro Stunde", "Meilen pro Stunde"),
		"°C": nm("Grad Celsius", "Grad Celsius"), "°F": nm("Grad Fahrenheit", "Grad Fahrenheit"),
		"°": nm("Grad", "Grad"),
	},
	"pt": {
		"km": nm("quilômetro", "quilômetros"), "kg": nm("quilograma", "quilogramas"),
		"cm": nm("centímetro", "centímetros"), "mm": nm("milímetro", "milímetros"),
		"mg": nm("miligrama", "miligramas"), "ml": nm("mililitro", "mililitros"),
		"km/h": nm("quilômetro por hora", "quilômetros por hora"), "mph": nf("milha por hora", "milhas por hora"),
		"°C": nm("grau Celsius", "graus Celsius"), "°F": nm("grau Fahrenheit", "graus Fahrenheit"),
		"°": nm("grau", "graus"),
	},
}

// ptEuropeanUnits spell "quilómetro" as Portugal does.
var ptEuropeanUnits = func() map[string]noun {
	out := map[string]noun{}
	for k, v := range unitNames["pt"] {
		out[k] = v
	}
	out["km"] = nm("quilómetro", "quilómetros")
	out["km/h"] = nm("quilómetro por hora", "quilómetros por hora")
	return out
}()

// nounGenders are common nouns that a number before them agrees with: es "1 hora" is "una
// hora", de "1 Stunde" "eine Stunde". A number before any other word is read alone, since
// the word may not be its noun ("el 1 es...").
var nounGenders = map[string]map[string]gender{
	"es": genders(masc, "día", "días", "mes", "meses", "año", "años", "minuto", "minutos",
		"segundo", "segundos", "dólar", "dólares", "euro", "euros", "peso", "pesos", "punto",
		"puntos", "paso", "pasos", "hombre", "hombres", "niño", "niños", "libro", "libros",
		"kilómetro", "kilómetros", "metro", "metros", "millón", "millones", "pago", "pagos").
		and(fem, "hora", "horas", "persona", "personas", "semana", "semanas", "vez", "veces",
			"libra", "libras", "noche", "noches", "página", "páginas", "cosa", "cosas", "casa",
			"casas", "tarjeta", "tarjetas", "cuenta", "cuentas", "transferencia",
			"transferencias", "opción", "opciones", "pregunta", "preguntas", "milla", "millas",
			"unidad", "unidades", "mujer", "mujeres", "niña", "niñas"),
	"fr": genders(masc, "jour", "jours", "mois", "an", "ans", "euro", "euros", "dollar",
		"dollars", "homme", "hommes", "point", "points", "compte", "comptes", "kilomètre",
		"kilomètres", "mètre", "mètres", "paiement", "paiements", "virement", "virements").
		and(fem, "heure", "heures", "personne", "personnes", "semaine", "semaines", "fois",
			"livre", "livres", "nuit", "nuits", "page", "pages", "chose", "choses", "carte",
			"cartes", "minute", "minutes", "seconde", "secondes", "année", "années",
			"journée", "journées", "option", "options", "question", "questions", "étape",
			"étapes", "femme", "femmes", "fille", "filles"),
	"pt": genders(masc, "dia", "dias", "mês", "meses", "ano", "anos", "minuto", "minutos",
		"segundo", "segundos", "dólar", "dólares", "euro", "euros", "real", "reais", "homem",
		"homens", "ponto", "pontos", "passo", "passos", "quilômetro", "quilômetros",
		"pagamento", "pagamentos").
		and(fem, "hora", "horas", "pessoa", "pessoas", "semana", "semanas", "vez", "vezes",
			"libra", "libras", "noite", "noites", "página", "páginas", "coisa", "coisas", "casa",
			"casas", "conta", "contas", "opção", "opções", "pergunta", "perguntas", "mulher",
			"mulheres", "transferência", "transferências", "milha", "milhas"),
	"de": genders(masc, "Tag", "Tage", "Monat", "Monate", "Jahr", "Jahre", "Euro", "Dollar",
		"Cent", "Mal", "Uhr", "Punkt", "Punkte", "Schritt", "Schritte", "Kilometer", "Konto",
		"Meter", "Kind", "Mann").
		and(fem, "Stunde", "Minute", "Sekunde", "Woche", "Person", "Seite", "Frage", "Nacht",
			"Überweisung", "Karte", "Million", "Milliarde", "Frau", "Zahlung"),
	"he": genders(masc, "שקלים", "דולרים", "ימים", "ילדים", "אנשים", "חודשים", "שבועות",
		"אחוזים", "קילומטרים", "מטרים", "תשלומים").
		and(fem, "שעות", "דקות", "שניות", "שנים", "פעמים", "אגורות", "נשים", "העברות"),
}

type genderTable map[string]gender

func genders(g gender, words ...string) genderTable {
	return genderTable{}.and(g, words...)
}

func (t genderTable) and(g gender, words ...string) genderTable {
	for _, w := range words {
		t[w] = g
	}
	return t
}

// scaleWord is a word of a large number written after an amount ("$5 million"): its gender,
// and whether "de" joins it to a noun (es "cinco millones de dólares").
type scaleWord struct {
	g  gender
	of bool
}

var scaleWords = map[string]map[string]scaleWord{
	"en": {"thousand": {}, "million": {}, "billion": {}, "trillion": {}},
	"es": {"mil": {g: masc}, "millón": {masc, true}, "millones": {masc, true},
		"billón": {masc, true}, "billones": {masc, true}},
	"fr": {"mille": {}, "million": {masc, true}, "millions": {masc, true},
		"milliard": {masc, true}, "milliards": {masc, true}},
	"de": {"Tausend": {}, "Million": {g: fem}, "Millionen": {g: fem}, "Milliarde": {g: fem},
		"Milliarden": {g: fem}},
	"pt": {"mil": {g: masc}, "milhão": {masc, true}, "milhões": {masc, true},
		"bilhão": {masc, true}, "bilhões": {masc, true}},
	"ar": {"ألف": {}, "مليون": {}, "مليار": {}},
}
