module github.com/pin/tftp/v3

go 1.23.0

require golang.org/x/net v0.43.0

require golang.org/x/sys v0.35.0 // indirect
