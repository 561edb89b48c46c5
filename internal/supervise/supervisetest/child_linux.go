package supervisetest

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// osMode runs the modes that need Linux calls.
func osMode(args []string) (int, bool) {
	switch args[0] {
	case "fg-check":
		fg, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
		if err != nil {
			fmt.Println("foreground none:", err)
			return 1, true
		}
		if fg == unix.Getpgrp() {
			fmt.Println("foreground yes")
		} else {
			fmt.Println("foreground no")
		}
		return 0, true
	}
	return 0, false
}
