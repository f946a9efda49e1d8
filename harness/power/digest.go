package power

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"strings"
)

// HTTP digest authentication (RFC 7616), as much as Shelly Gen2+ devices
// need: algorithm MD5 or SHA-256, qop auth or none.

// parseDigestChallenge reads a WWW-Authenticate header's Digest challenge.
func parseDigestChallenge(h string) (map[string]string, bool) {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	if !strings.EqualFold(scheme, "Digest") {
		return nil, false
	}
	params := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; {
		key, after, ok := strings.Cut(rest, "=")
		if !ok {
			return nil, false
		}
		var val string
		after = strings.TrimSpace(after)
		if strings.HasPrefix(after, `"`) {
			end := strings.IndexByte(after[1:], '"')
			if end < 0 {
				return nil, false
			}
			val, after = after[1:end+1], after[end+2:]
		} else {
			val, after, _ = strings.Cut(after, ",")
			after = "," + after
		}
		params[strings.ToLower(strings.TrimSpace(key))] = strings.TrimSpace(val)
		rest = strings.TrimLeft(strings.TrimSpace(after), ", ")
	}
	return params, params["nonce"] != ""
}

// digestAuthorization answers challenge ch for a request of method on uri.
func digestAuthorization(ch map[string]string, user, pass, method, uri, cnonce string) (string, error) {
	var newHash func() hash.Hash
	switch alg := ch["algorithm"]; strings.ToUpper(alg) {
	case "", "MD5":
		newHash = md5.New
	case "SHA-256":
		newHash = sha256.New
	default:
		return "", fmt.Errorf("the device asks for digest algorithm %s, which bootbench does not speak", alg)
	}
	h := func(s string) string {
		d := newHash()
		d.Write([]byte(s))
		return hex.EncodeToString(d.Sum(nil))
	}
	ha1 := h(user + ":" + ch["realm"] + ":" + pass)
	ha2 := h(method + ":" + uri)
	fields := []string{
		fmt.Sprintf(`username="%s"`, user),
		fmt.Sprintf(`realm="%s"`, ch["realm"]),
		fmt.Sprintf(`nonce="%s"`, ch["nonce"]),
		fmt.Sprintf(`uri="%s"`, uri),
	}
	if qops := strings.Split(strings.ReplaceAll(ch["qop"], " ", ""), ","); slices.Contains(qops, "auth") {
		const nc = "00000001"
		resp := h(ha1 + ":" + ch["nonce"] + ":" + nc + ":" + cnonce + ":auth:" + ha2)
		fields = append(fields, `response="`+resp+`"`, "qop=auth", "nc="+nc, `cnonce="`+cnonce+`"`)
	} else if ch["qop"] != "" {
		return "", fmt.Errorf("the device asks for digest qop %s, which bootbench does not speak", ch["qop"])
	} else {
		fields = append(fields, `response="`+h(ha1+":"+ch["nonce"]+":"+ha2)+`"`)
	}
	if alg := ch["algorithm"]; alg != "" {
		fields = append(fields, "algorithm="+alg)
	}
	if op, ok := ch["opaque"]; ok {
		fields = append(fields, `opaque="`+op+`"`)
	}
	return "Digest " + strings.Join(fields, ", "), nil
}

func newCnonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
