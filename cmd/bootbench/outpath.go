package main

import (
	"golang.org/x/sys/unix"
)

// kernelFS names the kernel's own filesystems by their statfs magic: their
// directories hold only the files the kernel makes, so an export can never
// be written there, whatever the file's mode says. Creating one fails
// with "no such file or directory", which names the wrong problem.
var kernelFS = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "proc",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	unix.CGROUP_SUPER_MAGIC:  "cgroup",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
}

// refuseKernelFS refuses an output path in one of the kernel's own
// filesystems, saying which.
func refuseKernelFS(path, dir string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil // the write will say what is wrong
	}
	if name, ok := kernelFS[int64(st.Type)]; ok {
		return usageErr("cannot write %s: %s is in the kernel's %s filesystem, which holds only the kernel's own files; name a file elsewhere", path, dir, name)
	}
	return nil
}
