module github.com/pin/tftp/v3

go 1.13

require golang.org/x/net v0.0.0-20200202094626-16171245cfb2
