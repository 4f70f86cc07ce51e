"""Per-thread counters of the calling thread through perf_event_open (ctypes, no perf tool): the
instructions it retires and its CPU time (task-clock), read around the part of a step that
launches work — the host-side cost a collector adds to a launch-bound job, without the GPU's or
the machine's timing noise. Counters the kernel or the hypervisor does not give are None."""
import ctypes
import os
import struct

_SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}.get(os.uname().machine)
_TYPE_HARDWARE, _TYPE_SOFTWARE = 0, 1
_HW_INSTRUCTIONS, _SW_TASK_CLOCK = 1, 1
_EXCLUDE_HV = 1 << 6
_libc = ctypes.CDLL(None, use_errno=True)


class _Attr(ctypes.Structure):  # struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes)
    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("config1", ctypes.c_uint64)]


def _open(kind, config):
    """A counter of this thread on any CPU, user and kernel, counting from now; (fd, None) or
    (None, why)."""
    if _SYS_PERF_EVENT_OPEN is None:
        return None, "unknown architecture"
    attr = _Attr(type=kind, size=ctypes.sizeof(_Attr), config=config, flags=_EXCLUDE_HV)
    fd = _libc.syscall(_SYS_PERF_EVENT_OPEN, ctypes.byref(attr), 0, -1, -1, 0)
    if fd < 0:
        return None, os.strerror(ctypes.get_errno())
    return fd, None


class Counters:
    """instructions and task-clock (ns) of the calling thread; read() gives both (None where
    unavailable); `why` says what was refused."""

    def __init__(self):
        self.instr_fd, why_i = _open(_TYPE_HARDWARE, _HW_INSTRUCTIONS)
        self.clock_fd, why_c = _open(_TYPE_SOFTWARE, _SW_TASK_CLOCK)
        self.why = {"instructions": why_i, "task_clock": why_c}

    def read(self):
        def one(fd):
            return None if fd is None else struct.unpack("Q", os.read(fd, 8))[0]
        return one(self.instr_fd), one(self.clock_fd)
