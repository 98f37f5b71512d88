package toolparse

import "strings"

// known is the set of command words text detection trusts without further
// evidence: common Unix utilities, shells' builtins that act, and the
// tools developers and operators run. A word outside it counts only with
// stronger evidence (a flag argument, or a ./script path).
var known = wordSet(`
alias apt apt-get arp awk base64 basename bash bc blkid bunzip2 bzip2 cargo
cat cc cd chgrp chmod chown chroot cksum clang clear cmp column comm cp cpio
crontab csplit curl cut date dd df diff dig dirname dmesg dnf docker
docker-compose du echo egrep env ethtool expand export expr fallocate fdisk fgrep file
find findmnt fmt fold free fsck fuser g++ gcc gdb git go gpg grep groupadd
groups gunzip gzip head helm hexdump host hostname hostnamectl htop iconv id
ifconfig iostat ip iptables java javac jobs journalctl jq kill killall
kubectl last lastlog less ln locate logger look ls lsblk lscpu lshw lsmod
lsof lspci lsusb make man md5sum mkdir mkfs mktemp modprobe more mount mpstat
mv nano nc ncdu netstat nice nl nmap node nohup nproc npm npx nslookup od
openssl passwd paste patch pgrep pidof pidstat ping pip pip3 pkill pmap podman
printenv printf ps pstree pwd python python3 read readlink realpath reboot
renice rg rm rmdir route rsync sar scp screen sed seq service sestatus sftp sh
sha1sum sha256sum shred shutdown sleep smartctl sort source split ss ssh stat strace
su sudo swapon swapoff sync sysctl systemctl tac tail tar tee telnet test
time timedatectl timeout tmux top touch tr traceroute tree truncate tty
type ufw ulimit umask umount uname uniq unset unzip uptime useradd userdel usermod users
vi vim vmstat w watch wc wget whereis which who whoami xargs xxd yes yum
zcat zip zsh
`)

// bareless are words that are also common literals or English: alone in
// backticks or quotes they are not taken for a command, only with
// arguments (`true` in prose about booleans, `file`, `test`).
var bareless = wordSet(`
cat echo export false file find head help host id last less link look make
man more nice no none null read set sleep sort source split stat tail test
time touch tree true type users wait which who yes
`)

// prefixes run the command that follows them; the tool is that command.
var prefixes = wordSet(`sudo env time nohup nice exec command doas`)

// shellLangs are the info strings of fenced blocks whose lines are commands.
var shellLangs = wordSet(`bash sh shell zsh fish console terminal shell-session shellsession ksh`)

// plainLangs are fences that may hold a terminal transcript: only lines
// with a "$ " prompt count there.
var plainLangs = wordSet(`text txt plaintext plain output log`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
