package packaging

import (
	"fmt"
	"strings"
)

// renderTemplate expands the subset of kardianos/service v1.3.0's template language our
// unit and plist use: {{Key}}, {{Key | fn | fn}}, {{.}}, {{if Key}}…{{end}} and
// {{range Key}}…{{end}}. kardianos keeps its engine unexported, so RenderUnit and
// RenderPlist need their own; TestKardianosWritesWhatRenderUnitRenders proves the two agree
// byte for byte. Values are string or []string, as in kardianos.
func renderTemplate(text string, data map[string]any, funcs map[string]func(string) string) (string, error) {
	var b strings.Builder
	rest, stop, err := expand(&b, text, data, nil, funcs, true)
	if err != nil {
		return "", err
	}
	if stop != "" || rest != "" {
		return "", fmt.Errorf("template: unexpected {{%s}}", stop)
	}
	return b.String(), nil
}

// expand writes text until the end of input or an {{end}}, returning the unconsumed rest
// and the keyword that stopped it. With emit false it only parses (a false {{if}}, an
// empty {{range}}).
func expand(b *strings.Builder, text string, data map[string]any, dot any, funcs map[string]func(string) string, emit bool) (rest, stop string, err error) {
	for {
		open := strings.Index(text, "{{")
		if open < 0 {
			if emit {
				b.WriteString(text)
			}
			return "", "", nil
		}
		closeAt := strings.Index(text[open:], "}}")
		if closeAt < 0 {
			return "", "", fmt.Errorf("template: unclosed {{")
		}
		if emit {
			b.WriteString(text[:open])
		}
		action := strings.TrimSpace(text[open+2 : open+closeAt])
		text = text[open+closeAt+2:]
		kw, arg, _ := strings.Cut(action, " ")
		switch kw {
		case "end":
			return text, "end", nil
		case "if", "range":
			v, err := lookupKey(data, dot, strings.TrimSpace(arg))
			if err != nil {
				return "", "", err
			}
			var body string
			if kw == "if" {
				on := truthy(v)
				if body, stop, err = expand(b, text, data, dot, funcs, emit && on); err != nil {
					return "", "", err
				}
			} else {
				items, ok := v.([]string)
				if !ok && v != nil {
					return "", "", fmt.Errorf("template: %q is not a list", arg)
				}
				// Parse the body once to find its end, then emit it per item.
				var sink strings.Builder
				if body, stop, err = expand(&sink, text, data, "", funcs, false); err != nil {
					return "", "", err
				}
				for _, it := range items {
					if _, _, err := expand(b, text, data, it, funcs, emit); err != nil {
						return "", "", err
					}
				}
			}
			if stop != "end" {
				return "", "", fmt.Errorf("template: {{%s}} without {{end}}", kw)
			}
			text = body
		default:
			parts := strings.Split(action, "|")
			v, err := lookupKey(data, dot, strings.TrimSpace(parts[0]))
			if err != nil {
				return "", "", err
			}
			s, ok := v.(string)
			if !ok {
				return "", "", fmt.Errorf("template: %q is not a string", parts[0])
			}
			for _, p := range parts[1:] {
				fn, ok := funcs[strings.TrimSpace(p)]
				if !ok {
					return "", "", fmt.Errorf("template: unknown function %q", strings.TrimSpace(p))
				}
				s = fn(s)
			}
			if emit {
				b.WriteString(s)
			}
		}
	}
}

func lookupKey(data map[string]any, dot any, key string) (any, error) {
	if key == "." {
		return dot, nil
	}
	v, ok := data[key]
	if !ok {
		return nil, fmt.Errorf("template: unknown key %q", key)
	}
	return v, nil
}

func truthy(v any) bool {
	switch t := v.(type) {
	case string:
		return t != ""
	case []string:
		return len(t) > 0
	}
	return false
}
