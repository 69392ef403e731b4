"""The A9 board's SD card: a raw FAT image on the host (std lib; Debian's
dosfstools and mtools, no root, no loop device).

The qemu-vexpress-a9 BSP (RT-Thread 5.3) drives QEMU's PL181 with
drivers/drv_sdio.c; the MMC/SD stack registers the card as the block device
"sd", and applications/mnt.c (INIT_ENV_EXPORT, after a 1 s delay) mounts it
with elm FAT at "/" (or, when it holds no file system, formats it with
elm's mkfs and mounts it). board.Board(..., sd=SdImage) attaches the image
with `-drive if=sd,format=raw,file=...`; the same image across boots is a
board whose SD card survives a reboot.

An image made here has no partition table (a "super floppy", as elm's own
mkfs makes it): the DFS partition probe finds no entry at 0x1BE and the
whole card is "sd". QEMU wants an SD card whose size is a power of two.

Host-side helpers work only while no QEMU has the image open (Board sets
`attached` while it runs and clears it in close()); each raises
SdError with mtools' message when it fails:

  img = SdImage(path); img.create()     a new, empty FAT16 image
  img.read('/agent/notes')              bytes, or None when missing
  img.write('/agent/notes', b'...')     replace or create (parents made)
  img.remove('/agent/notes')            delete (no error when missing)
  img.mkdir('/agent')                   a directory (parents made)
  img.listdir('/agent')                 names in a directory
  img.kind('/agent')                    'dir', 'file' or None
  img.make_unreadable('/agent/notes')   directory entry kept (name, size),
                                        its first cluster set to 0: the
                                        board opens it, and read() fails
                                        (elm's f_read: FR_INT_ERR, EIO)
"""
import os
import struct
import subprocess
import tempfile

# 64 MiB, as the BSP's qemu.sh makes its sd.bin (a power of two, as QEMU
# wants): mkfs.vfat makes it FAT16, 2 KB clusters.
DEFAULT_MIB = 64
LABEL = 'AGENTSD'


class SdError(Exception):
    pass


class SdImage:
    def __init__(self, path, mib=DEFAULT_MIB):
        if ',' in path:
            raise ValueError('no commas in the SD image path (qemu option syntax): %r' % path)
        if mib & (mib - 1):
            raise ValueError('QEMU wants an SD card whose size is a power of two, not %d MiB' % mib)
        self.path = os.path.abspath(path)
        self.mib = mib
        self.attached = None  # the Board that has it open (board.py)

    # -- making it -------------------------------------------------------------
    def create(self):
        """A new image: `mib` MiB, FAT (mkfs.vfat picks FAT16 for 64 MiB),
        no partition table, nothing on it. Replaces an older one."""
        self._idle('create')
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        if os.path.exists(self.path):
            os.remove(self.path)
        with open(self.path, 'wb') as f:
            f.truncate(self.mib << 20)
        self._run(['mkfs.vfat', '-n', LABEL, self.path])
        return self

    # -- reading and writing files -------------------------------------------
    def read(self, path):
        """The file's bytes, or None when it is not there."""
        self._idle('read')
        if not self._exists(path):
            return None
        return self._run(['mcopy', '-n', '-i', self.path, self._m(path), '-'])

    def write(self, path, data):
        """Replace (or create) the file with `data` (bytes or str); parent
        directories are made."""
        self._idle('write')
        if isinstance(data, str):
            data = data.encode()
        parts = [p for p in path.split('/') if p]
        if len(parts) > 1:
            self.mkdir('/' + '/'.join(parts[:-1]))
        if self._exists(path):
            self._run(['mdel', '-i', self.path, self._m(path)])
        with tempfile.NamedTemporaryFile(prefix='sd-', delete=False) as t:
            t.write(data)
        try:
            self._run(['mcopy', '-i', self.path, t.name, self._m(path)])
        finally:
            os.remove(t.name)

    def mkdir(self, path):
        """A directory (and its parents), if not there yet. The board's
        own mkdir cannot make one with this BSP's CFLAGS (-DO_DIRECTORY=0
        in its rtconfig.py: DFS then makes a regular file; see
        tests/qemu/README.md): a step that needs a directory makes it
        here, before the boot."""
        self._idle('mkdir')
        parts = [p for p in path.split('/') if p]
        for i in range(1, len(parts) + 1):
            d = '/' + '/'.join(parts[:i])
            if not self._exists(d):
                self._run(['mmd', '-i', self.path, self._m(d)])

    def kind(self, path):
        """'dir', 'file', or None when it is not there."""
        self._idle('kind')
        try:
            _, e = self._find(path)
        except SdError:
            return None
        return 'dir' if e[11] & 0x10 else 'file'

    def remove(self, path):
        self._idle('remove')
        if self._exists(path):
            self._run(['mdel', '-i', self.path, self._m(path)])

    def listdir(self, path='/'):
        """Names in a directory (long names where there are some)."""
        self._idle('listdir')
        return sorted(n for n, _, _, _ in self._entries(self._dir_start(path)) if n not in ('.', '..'))

    def make_unreadable(self, path):
        """Keep the file's directory entry (name, size, dates) and set its
        first cluster to 0: the file is listed with its size, open()
        succeeds, and the first read() fails (elm FAT: `clst < 2` ->
        FR_INT_ERR -> -EIO). Its old clusters stay allocated (lost). Returns
        (old first cluster, size)."""
        self._idle('make_unreadable')
        off, entry = self._find(path)
        if entry[11] & 0x10:
            raise SdError('%s is a directory' % path)
        old = struct.unpack_from('<H', entry, 20)[0] << 16 | struct.unpack_from('<H', entry, 26)[0]
        size = struct.unpack_from('<I', entry, 28)[0]
        with open(self.path, 'r+b') as f:
            f.seek(off + 20)
            f.write(b'\0\0')
            f.seek(off + 26)
            f.write(b'\0\0')
        return old, size

    # -- internals -------------------------------------------------------------
    def _idle(self, what):
        b = self.attached
        if b is not None and b.proc.poll() is None:
            raise SdError('%s: QEMU still has %s open: stop the board first' % (what, self.path))

    @staticmethod
    def _m(path):
        return '::' + ('/' + path.lstrip('/'))

    def _run(self, cmd):
        env = dict(os.environ, MTOOLSRC='/dev/null', MTOOLS_SKIP_CHECK='1', LC_ALL='C')
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            raise SdError('%s failed (exit %d): %s' % (' '.join(cmd[:1] + cmd[-2:]), p.returncode,
                                                       p.stderr.decode(errors='replace').strip()))
        return p.stdout

    def _exists(self, path):
        try:
            self._find(path)
            return True
        except SdError:
            return False

    # A small FAT12/16/32 reader: enough to find a directory entry by its
    # path (long or 8.3 name, case-insensitive) and where it is in the image.
    def _geometry(self):
        with open(self.path, 'rb') as f:
            bs = f.read(512)
        bps, spc, rsvd, nfats, rootents, tot16, _, fat16 = struct.unpack_from('<HBHBHHBH', bs, 11)
        tot32, = struct.unpack_from('<I', bs, 32)
        fat32, rootclus = struct.unpack_from('<I4xI', bs, 36)
        if bps == 0 or spc == 0 or bs[510:512] != b'\x55\xaa':
            raise SdError('%s holds no FAT file system' % self.path)
        fatsz = fat16 or fat32
        total = tot16 or tot32
        root_secs = (rootents * 32 + bps - 1) // bps
        data = rsvd + nfats * fatsz + root_secs
        clusters = (total - data) // spc
        kind = 12 if clusters < 4085 else 16 if clusters < 65525 else 32
        return {'bps': bps, 'spc': spc, 'fat': rsvd * bps, 'root': (rsvd + nfats * fatsz) * bps,
                'root_len': root_secs * bps, 'data': data * bps, 'kind': kind,
                'rootclus': rootclus if kind == 32 else 0}

    def _chain(self, g, clus):
        out = []
        with open(self.path, 'rb') as f:
            while 2 <= clus < (0x0FFFFFF7 if g['kind'] == 32 else 0xFFF7 if g['kind'] == 16 else 0xFF7):
                out.append(clus)
                if g['kind'] == 12:
                    f.seek(g['fat'] + clus * 3 // 2)
                    v, = struct.unpack('<H', f.read(2))
                    clus = (v >> 4) if clus & 1 else (v & 0xFFF)
                elif g['kind'] == 16:
                    f.seek(g['fat'] + clus * 2)
                    clus, = struct.unpack('<H', f.read(2))
                else:
                    f.seek(g['fat'] + clus * 4)
                    clus = struct.unpack('<I', f.read(4))[0] & 0x0FFFFFFF
                if len(out) > 1 << 20:
                    raise SdError('a cluster chain loops')
        return out

    def _dir_start(self, path):
        g = self._geometry()
        if path.strip('/') == '':
            return g, 0
        _, e = self._find(path)
        if not e[11] & 0x10:
            raise SdError('%s is not a directory' % path)
        return g, struct.unpack_from('<H', e, 20)[0] << 16 | struct.unpack_from('<H', e, 26)[0]

    def _entries(self, where):
        """(name, image offset, 32-byte entry) of each entry of a directory
        whose first cluster is `clus` (0: the root)."""
        g, clus = where
        if clus == 0 and g['kind'] != 32:
            spans = [(g['root'], g['root_len'])]
        else:
            csz = g['bps'] * g['spc']
            spans = [(g['data'] + (c - 2) * csz, csz) for c in self._chain(g, clus or g['rootclus'])]
        out, lfn = [], {}
        with open(self.path, 'rb') as f:
            for start, length in spans:
                f.seek(start)
                buf = f.read(length)
                for i in range(0, length, 32):
                    e = buf[i:i + 32]
                    if e[0] == 0:
                        return out
                    if e[0] == 0xE5:
                        lfn = {}
                        continue
                    if e[11] == 0x0F:
                        lfn[e[0] & 0x3F] = e[1:11] + e[14:26] + e[28:32]
                        continue
                    if e[11] & 0x08:  # the volume label
                        lfn = {}
                        continue
                    base, ext = e[0:8].decode('latin-1').rstrip(), e[8:11].decode('latin-1').rstrip()
                    # Windows NT's case flags, which elm and mtools set
                    # for all-lower-case 8.3 names instead of a long name.
                    base = base.lower() if e[12] & 0x08 else base
                    ext = ext.lower() if e[12] & 0x10 else ext
                    short = base + ('.' + ext if ext else '')
                    name = short
                    if lfn:
                        raw = b''.join(lfn[k] for k in sorted(lfn))
                        name = raw.decode('utf-16-le', errors='replace').split('\0')[0]
                    lfn = {}
                    out.append((name, start + i, e, short))
        return out

    def _find(self, path):
        parts = [p for p in path.split('/') if p]
        if not parts:
            raise SdError('the root has no directory entry')
        g = self._geometry()
        clus = 0
        for n, part in enumerate(parts):
            for name, off, e, short in self._entries((g, clus)):
                if part.lower() in (name.lower(), short.lower()):
                    break
            else:
                raise SdError('%s: no %s on the card' % (path, '/' + '/'.join(parts[:n + 1])))
            if n < len(parts) - 1:
                if not e[11] & 0x10:
                    raise SdError('%s: %s is not a directory' % (path, part))
                clus = struct.unpack_from('<H', e, 20)[0] << 16 | struct.unpack_from('<H', e, 26)[0]
        return off, e
