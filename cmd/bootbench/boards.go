package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/bootbench/bootbench/boards"
)

func cmdBoards(args []string) error {
	switch {
	case len(args) == 0 || (args[0] == "list" && len(args) == 1):
		return listBoards()
	case args[0] == "show" && len(args) == 2:
		return showBoard(args[1])
	case args[0] == "list":
		return usageErr("boards list: unexpected argument %q (usage: bootbench boards list)", args[1])
	case args[0] == "show":
		return usageErr("boards show: name one board (see 'bootbench boards list')")
	}
	return usageErr("boards: say list or show NAME")
}

func listBoards() error {
	ps, err := boards.All()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BOARD\tARCH\tBOOT\tCLOCKS (MHz)\tDESCRIPTION")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", p.Name, p.Arch, p.Boot, p.Clocks, p.Description)
	}
	return tw.Flush()
}

func showBoard(name string) error {
	p, err := boards.Get(name)
	if err != nil {
		return usageErr("%v", err)
	}
	fmt.Printf("name          %s\ndescription   %s\narch          %s\nram           %d MiB\nboot          %s\nimage format  %s\nconsole       %s at %d baud\nclocks        %v MHz (default %d, applied by %s)\ntimeouts      boot %s, run %s\n",
		p.Name, p.Description, p.Arch, p.RAMMB, p.Boot, p.ImageFormat, p.Console, p.Baud, p.Clocks, p.DefaultClock, p.ClockMethod, p.BootTimeout, p.RunTimeout)
	if v := p.Virtual; v != nil {
		fmt.Printf("virtual       %s %v, NIC %s, MAC %s\n", v.QEMU, v.Args, v.NIC, v.MAC)
	}
	if k := p.Kernel; k.Flavour != "" {
		fmt.Printf("kernel        Debian linux-image-*-%s (%s)\n", k.Flavour, k.DebianArch)
	}
	return nil
}
