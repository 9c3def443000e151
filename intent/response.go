package intent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/convengine/engine/widgets"
)

// response is the compiled copy of an intent in one locale.
type response struct {
	speak, voice, ask, errText, follow *template
	suggestions                        []*template
	widgets                            []widgetTemplate
}

type responseJSON struct {
	Speak       string       `json:"speak"`
	Voice       string       `json:"voice"`
	Ask         string       `json:"ask"`
	Error       string       `json:"error"`
	Follow      string       `json:"follow"`
	Suggestions []string     `json:"suggestions"`
	Widgets     []widgetJSON `json:"widgets"`
}

type widgetJSON struct {
	Stat     *statJSON     `json:"stat"`
	List     *listJSON     `json:"list"`
	Progress *progressJSON `json:"progress"`
	// Tool calls a UI tool of the host's own widgets (engine.WidgetType), such as show_card,
	// with templated arguments; the engine checks them against the widget's schema.
	Tool *callJSON `json:"tool"`
}

type statJSON struct {
	Label string `json:"label"`
	Value string `json:"value"`
	Delta string `json:"delta"`
}

type progressJSON struct {
	Label string `json:"label"`
	// Value is a path to a number from 0 to 1, with or without braces.
	Value string `json:"value"`
}

type listJSON struct {
	Title     string   `json:"title"`
	ItemsFrom string   `json:"items_from"`
	Limit     int      `json:"limit"`
	Item      itemJSON `json:"item"`
}

type itemJSON struct {
	Title    string `json:"title"`
	Subtitle string `json:"subtitle"`
	Trailing string `json:"trailing"`
}

// A widgetTemplate renders one UI tool call. ok is false when the data leaves the widget
// without its required content; the widget is then left out rather than sent invalid.
type widgetTemplate interface {
	render(s scope, maxList int) (tool string, args any, ok bool)
}

func compileResponse(raw json.RawMessage, path string, r refs, p *problems) *response {
	var j responseJSON
	if err := decodeStrict(raw, &j); err != nil {
		p.add(path, err)
		return nil
	}
	text := func(key, s string) *template {
		t, err := compileText(s, r)
		p.add(path+"."+key, err)
		return t
	}
	resp := &response{
		speak:   text("speak", j.Speak),
		voice:   text("voice", j.Voice),
		ask:     text("ask", j.Ask),
		errText: text("error", j.Error),
		follow:  text("follow", j.Follow),
	}
	if resp.speak.empty() && len(j.Widgets) == 0 {
		p.addf(path, "needs speak or widgets")
	}
	if len(j.Suggestions) > widgets.MaxSuggests {
		p.addf(path+".suggestions", "has more than %d entries", widgets.MaxSuggests)
	}
	for i, s := range j.Suggestions {
		resp.suggestions = append(resp.suggestions, text(fmt.Sprintf("suggestions[%d]", i), s))
	}
	for i, w := range j.Widgets {
		f := fmt.Sprintf("%s.widgets[%d]", path, i)
		if wt := compileWidget(w, f, r, p); wt != nil {
			resp.widgets = append(resp.widgets, wt)
		}
	}
	return resp
}

func compileWidget(j widgetJSON, path string, r refs, p *problems) widgetTemplate {
	n := 0
	for _, set := range []bool{j.Stat != nil, j.List != nil, j.Progress != nil, j.Tool != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		p.addf(path, "needs exactly one of stat, list, progress or tool")
		return nil
	}
	text := func(key, s string, required bool, r refs) *template {
		if required && strings.TrimSpace(s) == "" {
			p.addf(path+"."+key, "is missing")
		}
		t, err := compileText(s, r)
		p.add(path+"."+key, err)
		return t
	}
	valuePath := func(key, s string) []string {
		s = strings.TrimSpace(s)
		s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
		if s == "" {
			p.addf(path+"."+key, "is missing")
			return nil
		}
		fields := strings.Split(s, ".")
		if slices.Contains(fields, "") {
			p.addf(path+"."+key, "%q is not a path", s)
			return nil
		}
		p.add(path+"."+key, checkPath(fields, r))
		return fields
	}
	switch {
	case j.Tool != nil:
		return &toolWidgetTemplate{call: compileCall(*j.Tool, path+".tool", r, p)}
	case j.Stat != nil:
		return &statTemplate{
			label: text("stat.label", j.Stat.Label, true, r),
			value: text("stat.value", j.Stat.Value, true, r),
			delta: text("stat.delta", j.Stat.Delta, false, r),
		}
	case j.Progress != nil:
		return &progressTemplate{
			label: text("progress.label", j.Progress.Label, true, r),
			value: valuePath("progress.value", j.Progress.Value),
		}
	default:
		l := j.List
		if l.Limit < 0 || l.Limit > widgets.MaxListLen {
			p.addf(path+".list.limit", "must be from 1 to %d", widgets.MaxListLen)
		}
		item := refs{any: true}
		return &listTemplate{
			title:     text("list.title", l.Title, true, r),
			from:      valuePath("list.items_from", l.ItemsFrom),
			limit:     l.Limit,
			itemTitle: text("list.item.title", l.Item.Title, true, item),
			subtitle:  text("list.item.subtitle", l.Item.Subtitle, false, item),
			trailing:  text("list.item.trailing", l.Item.Trailing, false, item),
		}
	}
}

// toolWidgetTemplate calls a host widget's UI tool with its rendered arguments.
type toolWidgetTemplate struct{ call *call }

func (t *toolWidgetTemplate) render(s scope, _ int) (string, any, bool) {
	return t.call.name, t.call.arguments(s), true
}

type statTemplate struct{ label, value, delta *template }

type statArgs struct {
	Label string `json:"label"`
	Value string `json:"value"`
	Delta string `json:"delta,omitempty"`
}

func (t *statTemplate) render(s scope, _ int) (string, any, bool) {
	a := statArgs{Label: widgetText(t.label, s), Value: widgetText(t.value, s), Delta: widgetText(t.delta, s)}
	return widgets.ToolShowStat, a, a.Label != "" && a.Value != ""
}

type progressTemplate struct {
	label *template
	value []string
}

type progressArgs struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

func (t *progressTemplate) render(s scope, _ int) (string, any, bool) {
	a := progressArgs{Label: widgetText(t.label, s)}
	v, _ := s.lookup(t.value)
	n, ok := toNumber(v)
	a.Value = min(1, max(0, n))
	return widgets.ToolShowProgress, a, ok && a.Label != ""
}

type listTemplate struct {
	title                         *template
	from                          []string
	limit                         int
	itemTitle, subtitle, trailing *template
}

type listArgs struct {
	Title string     `json:"title"`
	Items []itemArgs `json:"items"`
}

type itemArgs struct {
	Title    string `json:"title"`
	Subtitle string `json:"subtitle,omitempty"`
	Trailing string `json:"trailing,omitempty"`
}

func (t *listTemplate) render(s scope, maxList int) (string, any, bool) {
	limit := t.limit
	if limit == 0 {
		limit = maxList
	}
	a := listArgs{Title: widgetText(t.title, s)}
	v, _ := s.lookup(t.from)
	items, _ := v.([]any)
	for _, it := range items {
		if len(a.Items) == limit {
			break
		}
		is := scope{root: s.root, item: it}
		row := itemArgs{Title: widgetText(t.itemTitle, is), Subtitle: widgetText(t.subtitle, is),
			Trailing: widgetText(t.trailing, is)}
		if row.Title != "" {
			a.Items = append(a.Items, row)
		}
	}
	return widgets.ToolShowList, a, a.Title != "" && len(a.Items) > 0
}

// widgetText renders a widget field within the length a client accepts.
func widgetText(t *template, s scope) string {
	return truncate(t.render(s), widgets.MaxTextLen)
}
