"""The timing sets as both timers get them: each set handed over as bytes just before its first
timed call, unpacked, and copied into device buffers reserved when its round began.

The candidate's counted calls are each set's first, right after the input monitor hands the set
over (input_monitor.py): a wait on a socket, the set's bytes unpacked, a copy to the device. That
work leaves the CPU's caches cold for the call that follows, which then launches its kernels more
slowly; a GPU waits for those launches, so the event timer sees it too. The reference's timers
take their sets the same way (from a monitor of their own, or from the set files' bytes), so the
calls the two medians count start from the same state, and neither side's speed is the other's
handover.

Nothing here imports torch at module level (the candidate stage imports it after setting its
environment).
"""
import os


class HandedOver:
    """Sets fetched as bytes from `source` (an input monitor's client, or `FileBytes`) when first
    asked for, and unpacked on the host. `on_theft(message)` hears of a set another reader took
    from the monitor before the error is raised."""

    def __init__(self, source, value_pack, on_theft=None):
        self._source, self._vp, self._sets = source, value_pack, {}
        self._on_theft = on_theft

    def __len__(self):
        return self._source.count

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(index)
        if index not in self._sets:
            from .input_monitor import HandOverMismatch
            try:
                data = self._source.fetch(index)
            except HandOverMismatch as exc:  # the timing cannot go on, and the theft shows
                if self._on_theft is not None:
                    self._on_theft(str(exc))
                raise
            self._sets[index] = self._vp.loads(data, f"timing set {index}", "cpu")
        return self._sets[index]


class FileBytes:
    """The timing sets' files read into memory, handed out by index as often as asked: the
    reference's timers' source where no monitor runs beside them."""

    def __init__(self, inputs_dir, count):
        self.count = count
        self._data = []
        for j in range(count):
            with open(os.path.join(inputs_dir, f"timing_{j}.ctp"), "rb") as f:
                self._data.append(f.read())

    def fetch(self, index):
        return self._data[index]


class OnDevice:
    """`sets` placed on the device one by one, as they are first asked for.

    `reserve` allocates a round's device buffers ahead of its calls, shaped like `like` (a set
    already placed), and a set asked for later is copied into its buffers. The device's memory
    is then laid out before the round's warm-up: a set allocated just before its first call would
    leave that call to find the allocator's cache used up and pay for new device memory inside
    the timer. The buffers hold nothing of the set until its call comes."""

    def __init__(self, sets, loader, value_pack, device, like=None):
        self._sets, self._loader, self._device, self._placed = sets, loader, device, {}
        self._value_pack = value_pack
        self._like, self._reserved = like, {}

    def __len__(self):
        return len(self._sets)

    def reserve(self, slots):
        if self._like is None:
            return
        import torch
        for slot in slots:
            if slot not in self._placed and slot not in self._reserved:
                self._reserved[slot] = [torch.empty_like(t, device=self._device)
                                        for t in self._value_pack.tensors_in(self._like)]

    def release(self, slots):
        """Drops the placed copies of `slots` (a finished round's), so the next timer's round
        reserves into the memory they held."""
        for slot in slots:
            self._placed.pop(slot, None)
            self._reserved.pop(slot, None)

    def __getitem__(self, index):
        if index not in self._placed:
            buffers = iter(self._reserved.pop(index, []))

            def place(t):
                buffer = next(buffers, None)
                if buffer is None or buffer.shape != t.shape or buffer.dtype != t.dtype:
                    return t.to(self._device)
                buffer.copy_(t)
                return buffer.requires_grad_(t.requires_grad)

            self._placed[index] = self._loader.map_tensors(self._sets[index], place)
        return self._placed[index]
