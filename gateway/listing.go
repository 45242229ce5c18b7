package gateway

// Turning what an upstream listed (internal/upstream lists it, raw) into
// catalog entries.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// parseTools turns raw tool definitions into catalog entries, refusing (with
// a logged reason) names that fail validation, duplicates after
// normalization, and oversized schemas.
func (u *route) parseTools(raws []json.RawMessage) []*Tool {
	type rawTool struct {
		Name         string          `json:"name"`
		Title        string          `json:"title"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	}
	byName := map[string]*Tool{}
	var order []string
	for _, raw := range raws {
		var rt rawTool
		if err := json.Unmarshal(raw, &rt); err != nil {
			u.g.log.Warn("tool refused", "server", u.name, "reason", "definition is not a JSON object: "+err.Error())
			continue
		}
		name, err := ValidateName(rt.Name)
		if err != nil {
			u.g.log.Warn("tool refused", "server", u.name, "tool", truncate(rt.Name, 80), "reason", err.Error())
			continue
		}
		if len(rt.InputSchema) > maxSchemaBytes {
			u.g.log.Warn("tool refused", "server", u.name, "tool", rt.Name, "reason", fmt.Sprintf("input schema is %d bytes, more than %d", len(rt.InputSchema), maxSchemaBytes))
			continue
		}
		if len(rt.InputSchema) == 0 || string(rt.InputSchema) == "null" {
			rt.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if rt.InputSchema[0] != '{' {
			u.g.log.Warn("tool refused", "server", u.name, "tool", rt.Name, "reason", "inputSchema is not a JSON object")
			continue
		}
		if string(rt.OutputSchema) == "null" {
			rt.OutputSchema = nil
		}
		if string(rt.Annotations) == "null" {
			rt.Annotations = nil
		}
		if rt.Title == "" && len(rt.Annotations) > 0 {
			var a struct {
				Title string `json:"title"`
			}
			_ = json.Unmarshal(rt.Annotations, &a)
			rt.Title = a.Title
		}
		if prev, dup := byName[name]; dup {
			// Keep the one whose upstream name sorts first, whatever the order listed.
			u.g.log.Warn("tool refused", "server", u.name, "tool", rt.Name, "reason", fmt.Sprintf("normalizes to %q like %q", name, prev.UpstreamName))
			if rt.Name > prev.UpstreamName {
				continue
			}
		} else {
			order = append(order, name)
		}
		byName[name] = &Tool{
			ID: ToolID(u.name, name), Server: u.name, Name: name, UpstreamName: rt.Name,
			Title: rt.Title, Description: rt.Description,
			InputSchema: rt.InputSchema, OutputSchema: rt.OutputSchema, Annotations: rt.Annotations,
			Raw:       stripMeta(raw),
			validator: newInputValidator(rt.InputSchema),
		}
	}
	sort.Strings(order)
	out := make([]*Tool, 0, len(order))
	for _, n := range order {
		out = append(out, byName[n])
	}
	return out
}

func (u *route) parseResources(raws []json.RawMessage) []Resource {
	out := make([]Resource, 0, len(raws))
	for _, raw := range raws {
		var r struct {
			URI  string `json:"uri"`
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &r) != nil || r.URI == "" {
			u.g.log.Warn("resource refused", "server", u.name, "reason", "no uri")
			continue
		}
		out = append(out, Resource{Server: u.name, URI: r.URI, Name: r.Name, Raw: stripMeta(raw)})
	}
	return out
}

func (u *route) parseTemplates(raws []json.RawMessage) []ResourceTemplate {
	out := make([]ResourceTemplate, 0, len(raws))
	for _, raw := range raws {
		var r struct {
			URITemplate string `json:"uriTemplate"`
			Name        string `json:"name"`
		}
		if json.Unmarshal(raw, &r) != nil || r.URITemplate == "" {
			u.g.log.Warn("resource template refused", "server", u.name, "reason", "no uriTemplate")
			continue
		}
		out = append(out, ResourceTemplate{Server: u.name, URITemplate: r.URITemplate, Name: r.Name, Raw: stripMeta(raw)})
	}
	return out
}

func (u *route) parsePrompts(raws []json.RawMessage) []Prompt {
	out := make([]Prompt, 0, len(raws))
	for _, raw := range raws {
		var r struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &r) != nil {
			continue
		}
		if _, err := ValidateName(r.Name); err != nil {
			u.g.log.Warn("prompt refused", "server", u.name, "prompt", truncate(r.Name, 80), "reason", err.Error())
			continue
		}
		out = append(out, Prompt{Server: u.name, Name: r.Name, Raw: stripMeta(raw)})
	}
	return out
}

// stripMeta removes a top-level "_meta" member (upstream metadata is not
// passed on: it can carry the upstream's own session or tracing state).
func stripMeta(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"_meta"`)) { // (string(raw) would copy every definition)
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m["_meta"]; !ok {
		return raw
	}
	delete(m, "_meta")
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}
