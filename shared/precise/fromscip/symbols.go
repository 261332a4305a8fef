package fromscip

import (
	"cmp"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"

	"github.com/toolshed/toolshed/shared/precise"
)

// maxText bounds a symbol's signature and documentation (a generated
// doc comment can be any size).
const maxText = 32 << 10

// symbolInfo converts what SCIP says of a symbol.
func symbolInfo(s *scip.SymbolInformation) precise.SymbolInfo {
	info := precise.SymbolInfo{Symbol: s.Symbol, DisplayName: s.DisplayName}
	info.Signature, info.Doc = documentation(s)
	if s.Kind != scip.SymbolInformation_UnspecifiedKind {
		info.Kind = s.Kind.String()
	}
	if info.Kind == "" && strings.HasPrefix(s.Symbol, "local ") {
		info.Kind = "Local"
	}
	if info.Kind == "" || info.DisplayName == "" {
		if d := lastDescriptor(s.Symbol); d != nil {
			info.Kind = cmp.Or(info.Kind, d.Suffix.String())
			info.DisplayName = cmp.Or(info.DisplayName, d.Name)
		}
	}
	for _, r := range s.Relationships {
		info.Relationships = append(info.Relationships, precise.Relationship{Symbol: r.Symbol,
			IsImplementation: r.IsImplementation, IsReference: r.IsReference,
			IsTypeDefinition: r.IsTypeDefinition, IsDefinition: r.IsDefinition})
	}
	return info
}

// lastDescriptor is the descriptor a global symbol ends with (nil for a
// local symbol or one that does not parse).
func lastDescriptor(symbol string) *scip.Descriptor {
	if strings.HasPrefix(symbol, "local ") {
		return nil
	}
	sym, err := scip.ParseSymbol(symbol)
	if err != nil || len(sym.Descriptors) == 0 {
		return nil
	}
	return sym.Descriptors[len(sym.Descriptors)-1]
}

// documentation splits a symbol's documentation into its signature (its
// signature_documentation, or else what indexers put first: a markdown
// code block) and the rest.
func documentation(s *scip.SymbolInformation) (signature, doc string) {
	parts := s.Documentation
	if sd := s.SignatureDocumentation; sd != nil && sd.Text != "" {
		signature = sd.Text
	} else if len(parts) > 0 && strings.HasPrefix(parts[0], "```") {
		signature = unfence(parts[0])
		parts = parts[1:]
	}
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return clip(strings.TrimSpace(signature)), clip(strings.Join(kept, "\n\n"))
}

// unfence returns the code of a markdown code block.
func unfence(block string) string {
	_, code, _ := strings.Cut(block, "\n")
	code = strings.TrimRight(code, " \n")
	return strings.TrimSuffix(code, "```")
}

func clip(s string) string {
	if len(s) <= maxText {
		return s
	}
	return strings.ToValidUTF8(s[:maxText], "") + "…"
}
