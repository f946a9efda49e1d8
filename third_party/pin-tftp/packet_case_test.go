package tftp

import (
	"reflect"
	"testing"
)

func TestUnpackRQFoldsCase(t *testing.T) {
	for _, tc := range []struct {
		name     string
		req      string
		wantMode string
		wantOpts options
	}{
		{"lower", "\x00\x01f\x00octet\x00blksize\x001024\x00", "octet", options{"blksize": "1024"}},
		{"upper", "\x00\x01f\x00NETASCII\x00TSIZE\x000\x00BLKSIZE\x001468\x00", "netascii", options{"tsize": "0", "blksize": "1468"}},
		{"lower wins after", "\x00\x01f\x00OcTeT\x00BLKSIZE\x00512\x00blksize\x001024\x00", "octet", options{"blksize": "1024"}},
		{"lower wins before", "\x00\x01f\x00octet\x00blksize\x001024\x00BlkSize\x00512\x00", "octet", options{"blksize": "1024"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, mode, opts, err := unpackRQ([]byte(tc.req))
			if err != nil || name != "f" || mode != tc.wantMode || !reflect.DeepEqual(opts, tc.wantOpts) {
				t.Errorf("unpackRQ = %q, %q, %v, %v; want f, %q, %v", name, mode, opts, err, tc.wantMode, tc.wantOpts)
			}
		})
	}
}
