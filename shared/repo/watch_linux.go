package repo

import "syscall"

// networkFS are the file systems (statfs magic numbers) whose changes made
// elsewhere raise no inotify event: NFS, SMB/CIFS, FUSE (sshfs and the
// like), 9P (WSL's /mnt drives), Ceph, AFS, Lustre.
var networkFS = map[int64]string{
	0x6969:     "nfs",
	0x517b:     "smb",
	0xfe534d42: "smb2",
	0xff534d42: "cifs",
	0x65735546: "fuse",
	0x01021997: "9p",
	0x00c36400: "ceph",
	0x5346414f: "afs",
	0x0bd00bd0: "lustre",
}

// unwatchable says why file-system events cannot follow dir, or "".
func unwatchable(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return ""
	}
	if name, ok := networkFS[int64(st.Type)]; ok {
		return "the repository is on a " + name + " file system, which reports no changes made elsewhere"
	}
	return ""
}
