package harness

import (
	"bytes"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl"
)

// lookbackBytes is how much of a served board's console before its run
// is searched for its firmware's banner: the board asks to boot after
// printing it, within a few KiB even of a Raspberry Pi's bootloader.
const lookbackBytes = 64 << 10

// noteFirmware puts in the run's record the firmware that booted it, as
// its console showed it: the last bootloader banner and the last clock
// announced before the kernel started (the firmware may have started
// again in between, RouterBOOT after its clock was changed). The console
// is read from the served board's lookback on, through the transcript.
func (r *run) noteFirmware() {
	text := r.rec.Transcript
	if len(r.lookback) > 0 {
		text = append(r.lookback[:len(r.lookback):len(r.lookback)], text...)
	}
	r.rec.Bootloader, r.rec.FirmwareClockMHz = bootFirmware(text, r.bootFrom)
}

// bootFirmware reads a console's text for the firmware of the boot that
// began at byte from (power-on, or the board asking to boot): its banner
// and the clock it announced, up to the first kernel to start at or after
// from. A kernel that started before from was an earlier boot's, and so
// was its firmware.
func bootFirmware(text []byte, from int) (string, boards.MHz) {
	var fw serialctl.BootFirmware
	for off := 0; off < len(text); {
		line, next := consoleLine(text, off)
		if fw.Line(line) {
			if off >= from {
				break
			}
			fw = serialctl.BootFirmware{}
		}
		off = next
	}
	return fw.Bootloader, fw.ClockMHz
}

// consoleLine is the line of text at off, without its line end, as a
// Console splits them, and where the next begins.
func consoleLine(text []byte, off int) (line []byte, next int) {
	end := bytes.IndexByte(text[off:], '\n')
	if end < 0 {
		return text[off:], len(text)
	}
	return bytes.TrimRight(text[off:off+end], "\r"), off + end + 1
}

// lookback is the console's text before a served run's, from the start of
// a line at most lookbackBytes before start, and that run's transcript.
func lookback(con *serialctl.Console, start int) (before, transcript []byte) {
	from := max(start-lookbackBytes, 0)
	text := con.TranscriptFrom(from)
	before, transcript = text[:start-from], text[start-from:]
	if from > 0 {
		// The cut fell inside a line: what is left of it is no line.
		if i := bytes.IndexByte(before, '\n'); i >= 0 {
			before = before[i+1:]
		} else {
			before = nil
		}
	}
	return before, transcript
}
