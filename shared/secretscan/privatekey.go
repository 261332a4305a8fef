package secretscan

import "bytes"

// beginMarker starts a PEM, OpenSSH or PGP armored block.
const beginMarker = "-----BEGIN "

// Bounds of a private key block.
const (
	maxLabel = 100 // the header's label, as gitleaks bounds it
	// minKeyChars is the least base64 a block holds: an Ed25519 key in
	// PKCS #8, the shortest private key in use, is 64 characters.
	minKeyChars = 64
)

// privateKeyAt reports whether a private key block starts at data[start:]
// (data[start:after] is beginMarker). A block is
//
//   - a header: beginMarker, a label of capitals, digits, spaces, '_' and
//     '-' ending in "PRIVATE KEY" or "PRIVATE KEY BLOCK" (PEM's "RSA
//     PRIVATE KEY", "ENCRYPTED PRIVATE KEY", OpenSSH's, PGP's), "-----";
//   - then, each on a line of its own, optional armor headers ("Proc-Type:
//     4,ENCRYPTED", "Version: GnuPG") and base64 lines holding at least
//     minKeyChars characters in all;
//   - then a footer: "-----END ", the same label, "-----".
//
// Lines may also break as in a string literal that holds the block: "\n"
// escapes, and quotes, '+', ',' and indentation between the lines (a key
// in a Go test, or in JSON). The header need not start its line (it
// follows the quote of such a literal). A header that is only named ("a
// block of type -----BEGIN RSA PRIVATE KEY-----", or the header and footer
// of an example with "..." between) has no such body, and is no block.
func privateKeyAt(data []byte, start, after int) bool {
	rest := data[after:]
	n := bytes.Index(rest[:min(len(rest), maxLabel+len("-----"))], []byte("-----"))
	if n < 0 || !privateLabel(rest[:n]) {
		return false
	}
	footer := append(append([]byte("-----END "), rest[:n]...), "-----"...)
	return keyBody(rest[n+len("-----"):], footer)
}

// privateLabel reports whether a header's label names a private key.
func privateLabel(label []byte) bool {
	for _, c := range label {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ' ' || c == '_' || c == '-') {
			return false
		}
	}
	return bytes.HasSuffix(label, []byte("PRIVATE KEY")) || bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK"))
}

// base64Chars are the characters of base64 lines ('=' pads, and starts
// PGP's checksum line).
var base64Chars = newCharset("A-Z", "a-z", "0-9", "+-+", "/-/", "=-=")

// keyBody reports whether body, what follows a private key header, is the
// rest of a block ending with footer (see privateKeyAt).
func keyBody(body, footer []byte) bool {
	chars := 0
	lineStart := false // a line break since the last base64 or armor line
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
		case c == '\\' && i+1 < len(body) && body[i+1] == 'n': // an escaped line break
			lineStart = true
			i += 2
		case c == '\\' && i+1 < len(body) && (body[i+1] == 'r' || body[i+1] == 't'):
			i += 2
		case c == ' ' || c == '\t' || c == '\r' || c == '"' || c == '\'' || c == '`' || c == ',' || (c == '+' && !lineStart):
			i++ // indentation, or what joins the lines of a string literal
		case c == '-':
			return bytes.HasPrefix(body[i:], footer) && chars >= minKeyChars
		case !lineStart:
			return false // text on the line of the header or of a base64 line
		case chars == 0 && armorHeader(body[i:]) > 0:
			i += armorHeader(body[i:])
			lineStart = false
		case base64Chars[c]:
			for i < len(body) && base64Chars[body[i]] {
				i++
				chars++
			}
			lineStart = false
		default:
			return false
		}
	}
	return false // no footer
}

// armorHeader returns the length of the armor header line that starts
// line ("Proc-Type: 4,ENCRYPTED", up to its line break), or 0 when line
// does not start with one.
func armorHeader(line []byte) int {
	n := 0
	for n < len(line) && ('A' <= line[n] && line[n] <= 'Z' || 'a' <= line[n] && line[n] <= 'z' || line[n] == '-') {
		n++
	}
	if n == 0 || n == len(line) || line[n] != ':' {
		return 0
	}
	end := bytes.IndexByte(line, '\n')
	if esc := bytes.Index(line, []byte(`\n`)); esc >= 0 && (end < 0 || esc < end) {
		end = esc
	}
	if end < 0 {
		return 0
	}
	return end
}

// jsonPrivateKeyAt reports whether a JSON "private_key" member holding a
// private key block starts at data[start:] (data[start:after] is
// `"private_key"`): a Google Cloud service-account key file.
func jsonPrivateKeyAt(data []byte, start, after int) bool {
	i := after
	skip := func() {
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
			i++
		}
	}
	skip()
	if i >= len(data) || data[i] != ':' {
		return false
	}
	i++
	skip()
	if i >= len(data) || data[i] != '"' || !bytes.HasPrefix(data[i+1:], []byte(beginMarker)) {
		return false
	}
	i++
	return privateKeyAt(data, i, i+len(beginMarker))
}
