package history

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// machineIDFiles are where a machine's stable id is read, in order:
// systemd's machine-id(5), its D-Bus predecessor, and the firmware's
// product UUID (readable by root only on most distributions).
var machineIDFiles = []string{"/etc/machine-id", "/var/lib/dbus/machine-id", "/sys/class/dmi/id/product_uuid"}

// machineAppID is the application-specific payload MachineID hashes: the
// same machine gives devctl an id no other program derives.
const machineAppID = "devctl history machine v1"

// MachineID returns this machine's id as devctl stores it: HMAC-SHA256
// keyed by the raw id over a fixed devctl payload, the first 16 hex digits
// (64 bits). The raw id is never written: machine-id(5) asks that it be
// treated as confidential and that applications derive their own id with
// a keyed hash, which is what systemd's sd_id128_get_machine_app_specific()
// does (HMAC-SHA256, the machine id as the key). read reads a file of the
// machine (the live host; a replay has no machine of its own). "" when no
// id is readable: a container without /etc/machine-id, macOS, Windows;
// records then carry no machine and are read as this machine's.
func MachineID(read func(name string) ([]byte, error)) string {
	for _, name := range machineIDFiles {
		b, err := read(name)
		if err != nil {
			continue
		}
		raw := bytes.TrimSpace(b)
		if len(raw) == 0 || len(raw) > 256 {
			continue
		}
		m := hmac.New(sha256.New, raw)
		m.Write([]byte(machineAppID))
		return hex.EncodeToString(m.Sum(nil))[:16]
	}
	return ""
}

// ForMachine keeps the records of the machine with id machine: its own,
// and those that name no machine (version 1 records, and any written where
// no id was readable). machine "" keeps everything.
func (rs Records) ForMachine(machine string) Records {
	if machine == "" {
		return rs
	}
	out := make(Records, 0, len(rs))
	for _, r := range rs {
		if r.Machine == "" || r.Machine == machine {
			out = append(out, r)
		}
	}
	return out
}
