package crc32c

import "testing"

// The check values of CRC-32C (RFC 3720 B.4 and the common "123456789").
func TestChecksum(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want uint32
	}{
		{nil, 0},
		{[]byte("123456789"), 0xe3069283},
		{make([]byte, 32), 0x8a9136aa},
	} {
		if got := Checksum(tc.in); got != tc.want {
			t.Errorf("Checksum(%q) = %08x, want %08x", tc.in, got, tc.want)
		}
	}
}
