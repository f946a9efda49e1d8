package redact

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`url "ftp://u:S3cret@198.18.5.7/relay" must start with http://`, `url "ftp://u:xxxxx@198.18.5.7/relay" must start with http://`},
		{"postgres://bench:S3cret@db.lab/results", "postgres://bench:xxxxx@db.lab/results"},
		{"http://admin:p@ss@198.18.5.7:80/cm?cmnd=Power", "http://admin:xxxxx@198.18.5.7:80/cm?cmnd=Power"},
		{"http://:S3cret@host", "http://:xxxxx@host"},
		{"curl -s http://u:S3cret@pdu/on && echo done", "curl -s http://u:xxxxx@pdu/on && echo done"},
		{"two: http://a:b@h1/ and https://c:d@h2", "two: http://a:xxxxx@h1/ and https://c:xxxxx@h2"},
		{"postgresql://db.lab/results?user=bench&password=S3cret&sslmode=off", "postgresql://db.lab/results?user=bench&password=xxxxx&sslmode=off"},
		{"postgres://db/r?PASSWORD=S3cret", "postgres://db/r?PASSWORD=xxxxx"},
		// Nothing to hide: as it was.
		{"postgres://bench@db.lab/results", "postgres://bench@db.lab/results"},
		{"http://198.18.5.7:8080/relay?on=1", "http://198.18.5.7:8080/relay?on=1"},
		{"mail bench@lab, time 12:30", "mail bench@lab, time 12:30"},
		{"ssh user@host:22", "ssh user@host:22"},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
		if Has(tt.in) != (tt.in != tt.want) {
			t.Errorf("Has(%q) = %v", tt.in, Has(tt.in))
		}
		if strings.Contains(Text(tt.in), "S3cret") {
			t.Errorf("Text(%q) leaks the password", tt.in)
		}
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := Writer(&b)
	line := "[   1.5s] power    on: curl http://u:S3cret@pdu/on\n"
	n, err := w.Write([]byte(line))
	if err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
	}
	if got := b.String(); got != "[   1.5s] power    on: curl http://u:xxxxx@pdu/on\n" {
		t.Errorf("wrote %q", got)
	}
}
