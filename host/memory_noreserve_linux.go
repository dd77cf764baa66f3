package host

import "syscall"

const mapNoReserve = syscall.MAP_NORESERVE
