package webfetch

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// sniffLen is how much of a body without a Content-Type is looked at to
// guess its type (as http.DetectContentType does).
const sniffLen = 512

// DefaultRejectTypes are the media types refused unless
// TOOLSHED_FETCH_REJECT_TYPES says otherwise: binary data, images, audio,
// video and archives.
func DefaultRejectTypes() []string {
	return []string{
		"application/octet-stream",
		"image/*", "audio/*", "video/*", "font/*",
		"application/zip", "application/gzip", "application/x-gzip", "application/x-tar",
		"application/x-bzip2", "application/x-xz", "application/zstd", "application/x-7z-compressed",
		"application/x-rar-compressed", "application/vnd.rar", "application/java-archive",
	}
}

// mediaTypes checks and lower-cases rejected types: "type/subtype" or
// "type/*".
func mediaTypes(list []string) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, t := range list {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		main, sub, ok := strings.Cut(t, "/")
		if !ok || main == "" || main == "*" || sub == "" || strings.ContainsAny(t, " ;,") || strings.Contains(sub, "/") {
			return nil, fmt.Errorf("%s: %q is not a media type such as image/png or image/*", RejectTypes.Name(), t)
		}
		out = append(out, t)
	}
	return out, nil
}

// mediaTypeOf returns the lower-case media type of a Content-Type value,
// without parameters.
func mediaTypeOf(contentType string) string {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// rejected reports whether a media type is on the list.
func rejected(list []string, mediaType string) bool {
	for _, r := range list {
		if r == mediaType || strings.HasSuffix(r, "/*") && strings.HasPrefix(mediaType, strings.TrimSuffix(r, "*")) {
			return true
		}
	}
	return false
}

// decodeText decodes a body to UTF-8: from the charset a byte order mark
// or the Content-Type declares; else as UTF-8 when it is valid UTF-8 (JSON
// and most of the web); else from an HTML <meta> declaration or, failing
// that, as windows-1252 (what browsers guess). Bytes that do not decode
// become U+FFFD; a byte order mark is dropped.
func decodeText(body []byte, contentType string) string {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	var text string
	switch {
	case name == "utf-8" || !certain && utf8.Valid(body):
		text = strings.ToValidUTF8(string(body), "\uFFFD")
	default:
		out, err := enc.NewDecoder().Bytes(body)
		if err != nil {
			out = body
		}
		text = strings.ToValidUTF8(string(out), "\uFFFD")
	}
	return strings.TrimPrefix(text, "\uFEFF")
}
