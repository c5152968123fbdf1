"""The kernel's own walls around a worker: Landlock for files, signals and TCP, seccomp for the
system calls that leave the process (ptrace, other processes' memory, the network, new
processes).

Both are applied by the worker to itself, before the code they guard exists: the file rules
before torch is imported (Landlock binds the calling thread and the threads it starts later,
so it must come before torch's thread pools; on a GPU just after CUDA has started), the process
rules just before a candidate is imported. Nothing in the process can lift them afterwards,
which makes them structural rather than checks a candidate could unhook. They sit under
bubblewrap where it is installed and are the only walls where it is not (GPU machines).

The plan comes from the parent in CRUCIBLE_SANDBOX (JSON): `read` and `write` are the paths the
stage needs; inside the `hidden` folders (the temporary root holding every job: the reference,
the expected outputs, other runs' files) nothing else may be read; `gpu` says whether CUDA
starts before the file rules.
"""
import ctypes
import json
import os
import platform
import stat

ENV = "CRUCIBLE_SANDBOX"

# Landlock (include/uapi/linux/landlock.h). The system call numbers are the same on every
# architecture.
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13     # ABI 2
TRUNCATE = 1 << 14  # ABI 3

_NET_BIND_TCP = 1 << 0     # ABI 4
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1

READ = READ_FILE | READ_DIR
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE
_CHANGE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
           | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM)

# Device files a worker writes to: the null and random devices, and the GPU drivers' nodes.
_DEVICE_NAMES = ("null", "zero", "full", "random", "urandom", "kfd")
_DEVICE_PREFIXES = ("nvidia",)

_PR_SET_NO_NEW_PRIVS = 38


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi():
    """The kernel's Landlock ABI version; 0 where it has none (or it is disabled)."""
    try:
        got = _libc().syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                              ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except Exception:
        return 0
    return max(int(got), 0)


def _handled_fs(abi):
    handled = EXECUTE | READ | _CHANGE
    if abi >= 2:
        handled |= REFER
    if abi >= 3:
        handled |= TRUNCATE
    return handled


class _Ruleset:
    """One Landlock layer under construction: rules are added, then it binds this thread."""

    def __init__(self, abi, handled_fs, network=False, scoped=False):
        self.abi = abi
        self.handled = handled_fs
        self.libc = _libc()
        attr = _RulesetAttr(handled_fs,
                            (_NET_BIND_TCP | _NET_CONNECT_TCP) if network and abi >= 4 else 0,
                            (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if scoped and abi >= 6 else 0)
        size = 8 if abi < 4 else (16 if abi < 6 else 24)
        fd = self.libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr),
                               ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = int(fd)
        self.rules = 0

    def allow(self, path, rights):
        """Grants `rights` beneath `path` (a file gets only the rights a file can have);
        a path that does not exist is skipped."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= _FILE_RIGHTS
            rights &= self.handled
            if not rights:
                return False
            attr = _PathBeneathAttr(rights, fd)
            if self.libc.syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(self.fd),
                                 ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr),
                                 ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            self.rules += 1
            return True
        finally:
            os.close(fd)

    def restrict(self):
        try:
            if self.libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
            if self.libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(self.fd),
                                 ctypes.c_uint32(0)) != 0:
                raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
        finally:
            os.close(self.fd)


def _real(path):
    return os.path.realpath(path)


def _within(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _visible_outside(hidden):
    """The paths that cover everything readable except the insides of `hidden`: for each folder
    on the way from / down to a hidden one, its other entries."""
    hidden = [h for h in {_real(h) for h in hidden} if h != "/"]
    if not hidden:
        return ["/"]
    shown = []

    def walk(folder):
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            child = os.path.join(folder, name)
            if child in hidden:
                continue
            if any(_within(h, child) for h in hidden):
                walk(child)
            else:
                shown.append(child)

    walk("/")
    return shown


def _device_files():
    found = []
    for name in sorted(os.listdir("/dev")):
        if name in _DEVICE_NAMES or name.startswith(_DEVICE_PREFIXES):
            found.append(os.path.join("/dev", name))
    if os.path.isdir("/dev/dri"):
        found += [os.path.join("/dev/dri", n) for n in sorted(os.listdir("/dev/dri"))]
    return found


def restrict_files(plan):
    """Applies the file, network and signal layer for `plan` (see the module's text). Returns
    what was applied, for the facts."""
    abi = landlock_abi()
    if abi <= 0:
        return {"landlock": 0, "applied": False,
                "reason": "the kernel has no Landlock (or it is disabled)"}
    ruleset = _Ruleset(abi, _handled_fs(abi), network=True, scoped=True)
    write = [_real(p) for p in plan.get("write", [])]
    read = [_real(p) for p in plan.get("read", [])]
    for path in _visible_outside(plan.get("hidden", [])):
        # Everything a program may read and run, except inside the writable paths below.
        ruleset.allow(path, READ | EXECUTE)
    for path in read:
        ruleset.allow(path, READ | EXECUTE)
    for path in _device_files():
        ruleset.allow(path, READ_FILE | WRITE_FILE)
    for path in write:
        ruleset.allow(path, READ | _CHANGE | REFER | TRUNCATE)
    ruleset.restrict()
    return {"landlock": abi, "applied": True, "rules": ruleset.rules,
            "network": "tcp denied" if abi >= 4 else "not covered by this kernel",
            "signals": "own domain only" if abi >= 6 else "not covered by this kernel"}


def restrict_execution(allowed):
    """A second Landlock layer: only the files in `allowed` (and the dynamic loader they start
    through) may be executed. Files written later cannot be run, whatever their folder."""
    abi = landlock_abi()
    if abi <= 0:
        return {"applied": False}
    # Landlock denies moving files between folders in every layer unless that layer grants it
    # (REFER), handled or not: this layer grants it everywhere and leaves it to the first.
    refer = REFER if abi >= 2 else 0
    ruleset = _Ruleset(abi, EXECUTE | refer)
    if refer:
        ruleset.allow("/", refer)
    granted = [p for p in list(allowed) + _dynamic_loaders() if ruleset.allow(p, EXECUTE)]
    ruleset.restrict()
    return {"applied": True, "executables": granted}


# --- seccomp --------------------------------------------------------------------------------

_SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EPERM, _ENOSYS = 1, 38
_X32_BIT = 0x40000000

# System call numbers by architecture, for the calls the filters name.
_NR = {
    "x86_64": {"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
               "pidfd_getfd": 438, "io_uring_setup": 425, "bpf": 321, "kexec_load": 246,
               "mount": 165, "unshare": 272, "setns": 308, "socket": 41, "fork": 57,
               "vfork": 58, "execve": 59, "execveat": 322, "clone": 56, "clone3": 435,
               "userfaultfd": 323, "keyctl": 250, "setsid": 112, "setpgid": 109,
               "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "msgget": 68, "msgsnd": 69,
               "msgrcv": 70, "msgctl": 71, "semget": 64, "semop": 65, "semctl": 66,
               "semtimedop": 220},
    "aarch64": {"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
                "pidfd_getfd": 438, "io_uring_setup": 425, "bpf": 280, "kexec_load": 104,
                "mount": 40, "unshare": 97, "setns": 268, "socket": 198, "fork": None,
                "vfork": None, "execve": 221, "execveat": 281, "clone": 220, "clone3": 435,
                "userfaultfd": 282, "keyctl": 219, "setsid": 157, "setpgid": 154,
                "shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197, "msgget": 186,
                "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "semget": 190, "semop": 193,
                "semctl": 191, "semtimedop": 192},
}
_AF_INET, _AF_INET6, _AF_PACKET = 2, 10, 17
_SYSV_IPC = ("shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl",
             "semget", "semop", "semctl", "semtimedop")
_CLONE_VFORK, _CLONE_THREAD = 0x4000, 0x10000

# BPF opcodes (linux/filter.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_RET_K = 0x06


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _deny(nr, errno=_EPERM):
    """nr == syscall ? return errno : go on (A holds the syscall number)."""
    return [(_JEQ_K, 0, 1, nr), (_RET_K, 0, 0, _RET_ERRNO | errno)]


def _deny_when_arg(nr, arg_checks, otherwise):
    """For syscall `nr`: load argument 0; the first check (opcode, constant, action) that
    matches decides, 'deny' or 'allow'; `otherwise` decides when none does."""
    verdict = {"deny": _RET_ERRNO | _EPERM, "allow": _RET_ALLOW}
    body = [(_LD_W_ABS, 0, 0, 16)]
    for op, k, action in arg_checks:
        body += [(op, 0, 1, k), (_RET_K, 0, 0, verdict[action])]
    body.append((_RET_K, 0, 0, verdict[otherwise]))
    return [(_JEQ_K, 0, len(body), nr)] + body


def _program(arch, rules):
    nr = _NR[arch]
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, _AUDIT_ARCH[arch]),
            (_RET_K, 0, 0, _RET_ERRNO | _EPERM),  # another ABI (32-bit calls): refused
            (_LD_W_ABS, 0, 0, 0)]
    if arch == "x86_64":  # the x32 numbers run the same calls under another number
        prog += [(0x35, 0, 1, _X32_BIT), (_RET_K, 0, 0, _RET_ERRNO | _EPERM)]  # JGE
    for rule in rules:
        prog += rule(nr)
    prog.append((_RET_K, 0, 0, _RET_ALLOW))
    return prog


def _install(arch, prog):
    filters = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), filters)
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    # TSYNC: every thread of the process gets the filter, torch's pools included.
    if libc.syscall(_SYS_SECCOMP[arch], ctypes.c_uint(_SECCOMP_SET_MODE_FILTER),
                    ctypes.c_uint(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog)) != 0:
        raise OSError(ctypes.get_errno(), "seccomp(SET_MODE_FILTER) failed")


def _arch():
    machine = platform.machine()
    return machine if machine in _NR else None


def _escape_rules(nr):
    # setsid and setpgid: a process that leaves the stage's process group outlives the stage's
    # kill and escapes its pauses and its memory watch (a stage forked by the fork server has
    # no PID namespace of its own to end it with).
    out = []
    for name in ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
                 "io_uring_setup", "bpf", "kexec_load", "mount", "unshare", "setns",
                 "userfaultfd", "keyctl", "setsid", "setpgid"):
        out += _deny(nr[name])
    out += _deny_when_arg(nr["socket"], [(_JEQ_K, _AF_INET, "deny"), (_JEQ_K, _AF_INET6, "deny"),
                                         (_JEQ_K, _AF_PACKET, "deny")], otherwise="allow")
    return out


def forbid_escapes():
    """No ptrace, no reading or writing another process's memory, no IP or packet sockets, no
    new namespaces or mounts, no io_uring (which runs calls outside this filter), no leaving the
    stage's session or process group."""
    arch = _arch()
    if arch is None:
        return {"applied": False, "reason": f"no filter for {platform.machine()}"}
    _install(arch, _program(arch, [_escape_rules]))
    return {"applied": True}


def forbid_processes(allow_spawn):
    """No new processes: no fork, no exec; threads only. With `allow_spawn` (backends whose
    compiler runs programs) vfork-style spawning and exec stay, and which files may be executed
    is left to restrict_execution; a plain fork that would keep running Python is still
    refused. No System V IPC either."""
    arch = _arch()
    if arch is None:
        return {"applied": False, "reason": f"no filter for {platform.machine()}"}

    def rules(nr):
        out = []
        if nr["fork"] is not None:
            out += _deny(nr["fork"])
        if not allow_spawn:
            for name in ("vfork", "execve", "execveat"):
                if nr[name] is not None:
                    out += _deny(nr[name])
        # clone3 passes its flags in memory a filter cannot read: answered "not implemented",
        # so the C library falls back to clone, whose flags it can.
        out += _deny(nr["clone3"], _ENOSYS)
        checks = [(_JSET_K, _CLONE_THREAD, "allow")]
        if allow_spawn:
            checks.append((_JSET_K, _CLONE_VFORK, "allow"))
        out += _deny_when_arg(nr["clone"], checks, otherwise="deny")
        # System V IPC outlives a process and, for stages forked from one server, is shared
        # between them: no channel from one candidate to a later one.
        for name in _SYSV_IPC:
            out += _deny(nr[name])
        return out

    _install(arch, _program(arch, [rules]))
    return {"applied": True, "spawn": "toolchain only" if allow_spawn else "none"}


_PLANNED = []


def planned():
    """Whether this process started as a worker with a plan from the parent (tests that run a
    stage inside their own process get no walls)."""
    return bool(_PLANNED)


def plan_from_environment():
    text = os.environ.pop(ENV, None)
    if not text:
        return None
    try:
        plan = json.loads(text)
    except ValueError:
        return None
    return plan if isinstance(plan, dict) else None


def toolchain_files():
    """What the compiling backends execute: ptxas and its sibling tools, a C compiler for
    Triton's launcher stubs with the programs it runs, and the linker PoCL's compiler calls."""
    import shutil
    import sysconfig
    found = []
    for name in ("TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH", "CC"):
        if os.environ.get(name):
            found.append(shutil.which(os.environ[name]) or os.environ[name])
    try:
        import triton.backends.nvidia as nvidia
        found.append(os.path.join(os.path.dirname(nvidia.__file__), "bin"))
    except Exception:
        pass
    for tool in ("gcc", "cc", "clang", "as", "ld", "ld.bfd", "ld.gold", "ld.lld",
                 "x86_64-linux-gnu-as", "x86_64-linux-gnu-ld", "aarch64-linux-gnu-as",
                 "aarch64-linux-gnu-ld"):
        path = shutil.which(tool)
        if path:
            found += [path, _real(path)]
    compiler = sysconfig.get_config_var("CC")
    if compiler:
        path = shutil.which(compiler.split()[0])
        if path:
            found += [path, _real(path)]
    # gcc runs cc1, collect2 and the like from its own folders.
    found += ["/usr/lib/gcc", "/usr/libexec/gcc", "/usr/x86_64-linux-gnu/bin",
              "/usr/aarch64-linux-gnu/bin"]
    return sorted({p for p in found if p and os.path.exists(p)})


def _dynamic_loaders():
    """The ELF interpreters: executing a dynamically linked program executes one of these."""
    return [_real(p) for p in ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")
            if os.path.exists(p)]


def _start_gpu():
    """Starts CUDA before the file layer: the driver names its threads through
    /proc/self/task/*/comm while it starts, and a write rule there would also cover
    /proc/self/task/*/mem. Its threads, started before the layer, run no Python; the candidate
    runs on this thread and on threads it starts later, which the layer binds."""
    try:
        import torch
        torch.cuda.init()
        torch.empty(1, device="cuda")
        return True
    except Exception as exc:  # the stage reports a GPU that does not start
        return f"{type(exc).__name__}: {exc}"[:300]


def apply_at_start():
    """The layers every stage gets before it imports anything heavy. A kernel without Landlock
    or an architecture without a filter table is reported, not fatal: bubblewrap may still
    stand around the process, and the facts say what held."""
    plan = plan_from_environment()
    if plan is None:
        return {"applied": False, "reason": "no sandbox plan from the parent"}
    _PLANNED.append(True)
    facts = {}
    try:
        facts["syscalls"] = forbid_escapes()
    except OSError as exc:
        facts["syscalls"] = {"applied": False, "reason": str(exc)}
    if plan.get("gpu"):
        facts["gpu_started_first"] = _start_gpu()
    try:
        facts["files"] = restrict_files(plan)
    except OSError as exc:
        facts["files"] = {"applied": False, "reason": str(exc)}
    facts["applied"] = bool(facts["files"].get("applied") and facts["syscalls"].get("applied"))
    return facts
