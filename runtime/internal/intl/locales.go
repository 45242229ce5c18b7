package intl

import (
	"strings"

	"github.com/dop251/goja"
)

// localeNumbers is how one locale writes numbers, percents and currencies:
// CLDR's data for it, as ICU 78 (Node 22) formats them. A locale missing
// here falls back to its language's entry, then to en-US; it never throws.
type localeNumbers struct {
	tag              string
	decimal, group   string
	minGrouping      int  // digits before grouping starts: 1, or 2 ("1234,5" in es-ES)
	indian           bool // 12,34,567
	percentSpace     bool // "26 %"
	currencySuffix   bool // "1.234,50 €"
	currencySpace    bool // "€ 1.234,50"
	minusAfterSymbol bool // "€ -1.234,50"
	symbols          map[string]string
}

const nbsp = "\u00a0"

// numberLocales are the locales formatted exactly (checked against Node 22
// in runtime/testdata/nodediff/intl.js).
var numberLocales = map[string]*localeNumbers{
	"en-US": {decimal: ".", group: ",", minGrouping: 1},
	"en-GB": {decimal: ".", group: ",", minGrouping: 1, symbols: map[string]string{"USD": "US$", "JPY": "JP¥"}},
	"de-DE": {decimal: ",", group: ".", minGrouping: 1, percentSpace: true, currencySuffix: true},
	"fr-FR": {decimal: ",", group: "\u202f", minGrouping: 1, percentSpace: true, currencySuffix: true, symbols: map[string]string{"USD": "$US", "GBP": "£GB", "JPY": "JPY"}},
	"es-ES": {decimal: ",", group: ".", minGrouping: 2, percentSpace: true, currencySuffix: true, symbols: map[string]string{"USD": "US$", "GBP": "GBP", "JPY": "JPY"}},
	"it-IT": {decimal: ",", group: ".", minGrouping: 2, currencySuffix: true, symbols: map[string]string{"USD": "USD", "JPY": "JPY"}},
	"pt-BR": {decimal: ",", group: ".", minGrouping: 1, currencySpace: true, symbols: map[string]string{"USD": "US$", "JPY": "JP¥"}},
	"ja-JP": {decimal: ".", group: ",", minGrouping: 1, symbols: map[string]string{"JPY": "￥"}},
	"zh-CN": {decimal: ".", group: ",", minGrouping: 1, symbols: map[string]string{"USD": "US$", "JPY": "JP¥", "CNY": "¥"}},
	"ko-KR": {decimal: ".", group: ",", minGrouping: 1, symbols: map[string]string{"USD": "US$", "JPY": "JP¥"}},
	"ru-RU": {decimal: ",", group: nbsp, minGrouping: 1, percentSpace: true, currencySuffix: true},
	"hi-IN": {decimal: ".", group: ",", minGrouping: 1, indian: true, symbols: map[string]string{"JPY": "JP¥"}},
	"en-IN": {decimal: ".", group: ",", minGrouping: 1, indian: true, symbols: map[string]string{"JPY": "JP¥"}},
	"nl-NL": {decimal: ",", group: ".", minGrouping: 1, currencySpace: true, minusAfterSymbol: true, symbols: map[string]string{"USD": "US$", "JPY": "JP¥"}},
}

// languageDefaults maps a bare language to the locale it means.
var languageDefaults = map[string]string{"en": "en-US", "de": "de-DE", "fr": "fr-FR", "es": "es-ES", "it": "it-IT",
	"pt": "pt-BR", "ja": "ja-JP", "zh": "zh-CN", "ko": "ko-KR", "ru": "ru-RU", "hi": "hi-IN", "nl": "nl-NL"}

func init() {
	for tag, l := range numberLocales {
		l.tag = tag
	}
}

// numberLocale resolves a locales argument (a tag, an array of tags, or
// undefined) to the entry it formats with.
func numberLocale(v goja.Value) *localeNumbers {
	var tags []string
	switch x := v.Export().(type) {
	case string:
		tags = []string{x}
	case []any:
		for _, t := range x {
			if s, ok := t.(string); ok {
				tags = append(tags, s)
			}
		}
	}
	for _, t := range tags {
		parts := strings.Split(strings.ReplaceAll(t, "_", "-"), "-")
		lang := strings.ToLower(parts[0])
		if len(parts) > 1 {
			if l, ok := numberLocales[lang+"-"+strings.ToUpper(parts[len(parts)-1])]; ok {
				return l
			}
		}
		if d, ok := languageDefaults[lang]; ok {
			return numberLocales[d]
		}
	}
	return numberLocales["en-US"]
}

// groupDigits inserts the locale's grouping separators into an integer.
func (l *localeNumbers) groupDigits(intPart string) string {
	if len(intPart) < 4 || len(intPart) < 3+l.minGrouping {
		return intPart
	}
	var groups []string
	rest := intPart
	size := 3
	for len(rest) > size {
		groups = append([]string{rest[len(rest)-size:]}, groups...)
		rest = rest[:len(rest)-size]
		if l.indian {
			size = 2
		}
	}
	groups = append([]string{rest}, groups...)
	return strings.Join(groups, l.group)
}

// symbol is the locale's currency symbol for an ISO code.
func (l *localeNumbers) symbol(code string) (string, bool) {
	if s, ok := l.symbols[code]; ok {
		return s, true
	}
	switch code {
	case "USD", "EUR", "GBP", "JPY":
		return map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}[code], true
	}
	if l.tag == "en-US" {
		s, ok := currencySymbols[code]
		return s, ok
	}
	return "", false
}
