/*
** A SQLite VFS shim that writes a transaction's WAL frames with one system call instead of two per frame.
**
** SQLite writes each WAL frame as two pwrite() calls (its 24-byte header, then the page) and nothing
** coalesces them: a commit of 300 pages makes 600 system calls, which docs/performance.md measured at a fifth
** of the serving thread's time in a batch of new leads. This shim, registered as the default VFS, passes every
** file through to "unix" except the WAL, whose contiguous writes it gathers in memory and hands to the
** kernel in one write:
**
**   - when the frame that commits a transaction is complete (a frame header whose "database size" field is not
**     zero marks it), so a COMMIT returns only after its frames are in the file, with the write's error;
**   - before any other operation on the WAL or on its database file (read, sync, truncate, size, lock, the
**     wal-index's shared memory and its barrier), so nothing SQLite or another connection does can see the file
**     without the frames written before it;
**   - when the next write is not contiguous or the buffer is full.
**
** Frames buffered and not yet written belong to a transaction that has not committed: the wal-index header,
** which alone makes frames visible to readers, is written after the commit frame (and behind a barrier that
** flushes too). A crash loses only what a crash before the write() would have lost. Durability is unchanged:
** a sync always follows the flush.
**
** Loaded as an extension (src/db/wal-buffer.ts); SQLITE_OK_LOAD_PERMANENTLY keeps it loaded for the process.
*/
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1
#include <string.h>

#define WB_NAME "wal-buffer"
#define WB_FRAME_HEADER 24
#define WB_BUFFER_MAX (8 * 1024 * 1024)

typedef struct WbFile WbFile;
struct WbFile {
  sqlite3_file base;        /* the shim's methods */
  sqlite3_file *pReal;      /* the "unix" file, stored right after this struct */
  WbFile *pWal;             /* a database file: its open WAL, if any */
  WbFile *pDb;              /* a WAL: its database file */
  unsigned char *aBuf;      /* a WAL: bytes written and not yet passed on */
  int nBuf;                 /* bytes in aBuf */
  int szBuf;                /* allocated size of aBuf */
  sqlite3_int64 iOfst;      /* file offset of aBuf[0] */
  int commitHeader;         /* the last write was the header of a commit frame */
};

static sqlite3_vfs *wbOrig;

/* Process-wide counts, read by wal_buffer_stats() (tests and benchmarks): WAL writes SQLite asked for, writes
** this shim passed on, the bytes SQLite asked to write to WALs, and the commits (commit frames) among them. */
static sqlite3_int64 wbWritesAsked;
static sqlite3_int64 wbWritesDone;
static sqlite3_int64 wbBytesAsked;
static sqlite3_int64 wbCommits;
#define REAL(p) (((WbFile *)(p))->pReal)

/* The "unix" VFS writes at most 0x1ffff bytes a call (seekAndWriteFd masks the count; a larger write comes back
** short, and SQLITE_FULL at a multiple of 128 KiB): the buffer goes out in pieces of 31 pages of 4 KiB. */
#define WB_WRITE_MAX (31 * 4096)

static int wbFlush(WbFile *p) {
  int done = 0;
  int rc = SQLITE_OK;
  while (rc == SQLITE_OK && done < p->nBuf) {
    int n = p->nBuf - done < WB_WRITE_MAX ? p->nBuf - done : WB_WRITE_MAX;
    __atomic_add_fetch(&wbWritesDone, 1, __ATOMIC_RELAXED);
    rc = REAL(p)->pMethods->xWrite(REAL(p), p->aBuf + done, n, p->iOfst + done);
    done += n;
  }
  p->nBuf = 0;
  return rc;
}

/* Flushes the WAL belonging to p, whether p is that WAL or its database file. */
static int wbFlushFor(sqlite3_file *pFile) {
  WbFile *p = (WbFile *)pFile;
  if (p->pWal) return wbFlush(p->pWal);
  return p->aBuf ? wbFlush(p) : SQLITE_OK;
}

static int wbIsCommitHeader(const void *z, int iAmt) {
  const unsigned char *a = (const unsigned char *)z;
  return iAmt == WB_FRAME_HEADER && (a[4] | a[5] | a[6] | a[7]) != 0;
}

static int wbWalWrite(WbFile *p, const void *z, int iAmt, sqlite_int64 iOfst) {
  int rc;
  int commitPage = p->commitHeader;
  p->commitHeader = 0;
  __atomic_add_fetch(&wbWritesAsked, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&wbBytesAsked, iAmt, __ATOMIC_RELAXED);
  if (commitPage) __atomic_add_fetch(&wbCommits, 1, __ATOMIC_RELAXED);
  if (p->nBuf > 0 && (iOfst != p->iOfst + p->nBuf || p->nBuf + iAmt > p->szBuf)) {
    rc = wbFlush(p);
    if (rc != SQLITE_OK) return rc;
  }
  if (p->nBuf + iAmt > p->szBuf) {
    int want = p->szBuf ? p->szBuf : 256 * 1024;
    while (want < p->nBuf + iAmt && want < WB_BUFFER_MAX) want *= 2;
    if (want >= p->nBuf + iAmt) {
      unsigned char *a = sqlite3_realloc(p->aBuf, want);
      if (a) {
        p->aBuf = a;
        p->szBuf = want;
      }
    }
    if (p->nBuf + iAmt > p->szBuf) {
      rc = wbFlush(p);
      if (rc != SQLITE_OK) return rc;
      __atomic_add_fetch(&wbWritesDone, 1, __ATOMIC_RELAXED);
      return REAL(p)->pMethods->xWrite(REAL(p), z, iAmt, iOfst);
    }
  }
  if (p->nBuf == 0) p->iOfst = iOfst;
  memcpy(p->aBuf + p->nBuf, z, iAmt);
  p->nBuf += iAmt;
  if (commitPage) return wbFlush(p);
  p->commitHeader = wbIsCommitHeader(z, iAmt);
  return SQLITE_OK;
}

static int wbClose(sqlite3_file *pFile) {
  WbFile *p = (WbFile *)pFile;
  int rc = p->aBuf ? wbFlush(p) : SQLITE_OK;
  int rc2;
  if (p->pDb && p->pDb->pWal == p) p->pDb->pWal = 0;
  if (p->pWal) p->pWal->pDb = 0;
  sqlite3_free(p->aBuf);
  p->aBuf = 0;
  rc2 = REAL(p)->pMethods->xClose(REAL(p));
  return rc != SQLITE_OK ? rc : rc2;
}

static int wbRead(sqlite3_file *pFile, void *z, int iAmt, sqlite_int64 iOfst) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xRead(REAL(pFile), z, iAmt, iOfst);
}

static int wbWrite(sqlite3_file *pFile, const void *z, int iAmt, sqlite_int64 iOfst) {
  WbFile *p = (WbFile *)pFile;
  if (p->pDb || p->aBuf) return wbWalWrite(p, z, iAmt, iOfst);
  return REAL(pFile)->pMethods->xWrite(REAL(pFile), z, iAmt, iOfst);
}

static int wbTruncate(sqlite3_file *pFile, sqlite_int64 size) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xTruncate(REAL(pFile), size);
}

static int wbSync(sqlite3_file *pFile, int flags) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xSync(REAL(pFile), flags);
}

static int wbFileSize(sqlite3_file *pFile, sqlite_int64 *pSize) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xFileSize(REAL(pFile), pSize);
}

static int wbLock(sqlite3_file *pFile, int eLock) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xLock(REAL(pFile), eLock);
}

static int wbUnlock(sqlite3_file *pFile, int eLock) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xUnlock(REAL(pFile), eLock);
}

static int wbCheckReservedLock(sqlite3_file *pFile, int *pResOut) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xCheckReservedLock(REAL(pFile), pResOut);
}

static int wbFileControl(sqlite3_file *pFile, int op, void *pArg) {
  int rc = wbFlushFor(pFile);
  if (rc != SQLITE_OK) return rc;
  rc = REAL(pFile)->pMethods->xFileControl(REAL(pFile), op, pArg);
  if (rc == SQLITE_OK && op == SQLITE_FCNTL_VFSNAME) {
    *(char **)pArg = sqlite3_mprintf(WB_NAME "/%z", *(char **)pArg);
  }
  return rc;
}

static int wbSectorSize(sqlite3_file *pFile) {
  return REAL(pFile)->pMethods->xSectorSize(REAL(pFile));
}

static int wbDeviceCharacteristics(sqlite3_file *pFile) {
  return REAL(pFile)->pMethods->xDeviceCharacteristics(REAL(pFile));
}

static int wbShmMap(sqlite3_file *pFile, int iPg, int pgsz, int bExtend, void volatile **pp) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xShmMap(REAL(pFile), iPg, pgsz, bExtend, pp);
}

static int wbShmLock(sqlite3_file *pFile, int offset, int n, int flags) {
  int rc = wbFlushFor(pFile);
  return rc != SQLITE_OK ? rc : REAL(pFile)->pMethods->xShmLock(REAL(pFile), offset, n, flags);
}

/* No error can leave a barrier: the commit frame's write has flushed already, so this one finds nothing. */
static void wbShmBarrier(sqlite3_file *pFile) {
  wbFlushFor(pFile);
  REAL(pFile)->pMethods->xShmBarrier(REAL(pFile));
}

static int wbShmUnmap(sqlite3_file *pFile, int deleteFlag) {
  wbFlushFor(pFile);
  return REAL(pFile)->pMethods->xShmUnmap(REAL(pFile), deleteFlag);
}

static int wbFetch(sqlite3_file *pFile, sqlite3_int64 iOfst, int iAmt, void **pp) {
  return REAL(pFile)->pMethods->xFetch(REAL(pFile), iOfst, iAmt, pp);
}

static int wbUnfetch(sqlite3_file *pFile, sqlite3_int64 iOfst, void *pPage) {
  return REAL(pFile)->pMethods->xUnfetch(REAL(pFile), iOfst, pPage);
}

static const sqlite3_io_methods wbIoMethods = {
  3,
  wbClose, wbRead, wbWrite, wbTruncate, wbSync, wbFileSize, wbLock, wbUnlock, wbCheckReservedLock,
  wbFileControl, wbSectorSize, wbDeviceCharacteristics,
  wbShmMap, wbShmLock, wbShmBarrier, wbShmUnmap,
  wbFetch, wbUnfetch,
};

static int wbOpen(sqlite3_vfs *pVfs, const char *zName, sqlite3_file *pFile, int flags, int *pOutFlags) {
  WbFile *p = (WbFile *)pFile;
  int rc;
  memset(p, 0, sizeof(*p));
  p->pReal = (sqlite3_file *)&p[1];
  rc = wbOrig->xOpen(wbOrig, zName, p->pReal, flags, pOutFlags);
  if (rc != SQLITE_OK) {
    p->base.pMethods = 0;
    return rc;
  }
  p->base.pMethods = &wbIoMethods;
  if ((flags & SQLITE_OPEN_WAL) && zName) {
    WbFile *pDb = (WbFile *)sqlite3_database_file_object(zName);
    if (pDb && pDb->base.pMethods == &wbIoMethods) {
      p->pDb = pDb;
      pDb->pWal = p;
    }
  }
  return SQLITE_OK;
}

static int wbDelete(sqlite3_vfs *pVfs, const char *zName, int syncDir) {
  return wbOrig->xDelete(wbOrig, zName, syncDir);
}
static int wbAccess(sqlite3_vfs *pVfs, const char *zName, int flags, int *pResOut) {
  return wbOrig->xAccess(wbOrig, zName, flags, pResOut);
}
static int wbFullPathname(sqlite3_vfs *pVfs, const char *zName, int nOut, char *zOut) {
  return wbOrig->xFullPathname(wbOrig, zName, nOut, zOut);
}
static void *wbDlOpen(sqlite3_vfs *pVfs, const char *zPath) { return wbOrig->xDlOpen(wbOrig, zPath); }
static void wbDlError(sqlite3_vfs *pVfs, int nByte, char *zErrMsg) { wbOrig->xDlError(wbOrig, nByte, zErrMsg); }
static void (*wbDlSym(sqlite3_vfs *pVfs, void *p, const char *zSym))(void) {
  return wbOrig->xDlSym(wbOrig, p, zSym);
}
static void wbDlClose(sqlite3_vfs *pVfs, void *pHandle) { wbOrig->xDlClose(wbOrig, pHandle); }
static int wbRandomness(sqlite3_vfs *pVfs, int nByte, char *zBufOut) {
  return wbOrig->xRandomness(wbOrig, nByte, zBufOut);
}
static int wbSleep(sqlite3_vfs *pVfs, int nMicro) { return wbOrig->xSleep(wbOrig, nMicro); }
static int wbCurrentTime(sqlite3_vfs *pVfs, double *pTimeOut) { return wbOrig->xCurrentTime(wbOrig, pTimeOut); }
static int wbGetLastError(sqlite3_vfs *pVfs, int a, char *b) { return wbOrig->xGetLastError(wbOrig, a, b); }
static int wbCurrentTimeInt64(sqlite3_vfs *pVfs, sqlite3_int64 *p) {
  return wbOrig->xCurrentTimeInt64(wbOrig, p);
}

static sqlite3_vfs wbVfs = {
  2, 0, 1024, 0, WB_NAME, 0,
  wbOpen, wbDelete, wbAccess, wbFullPathname,
  wbDlOpen, wbDlError, wbDlSym, wbDlClose,
  wbRandomness, wbSleep, wbCurrentTime, wbGetLastError, wbCurrentTimeInt64,
  0, 0, 0,
};

static void wbStats(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  char *z = sqlite3_mprintf("{\"asked\":%lld,\"written\":%lld,\"bytes\":%lld,\"commits\":%lld}",
                            __atomic_load_n(&wbWritesAsked, __ATOMIC_RELAXED),
                            __atomic_load_n(&wbWritesDone, __ATOMIC_RELAXED),
                            __atomic_load_n(&wbBytesAsked, __ATOMIC_RELAXED),
                            __atomic_load_n(&wbCommits, __ATOMIC_RELAXED));
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_walbuffer_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  int rc = SQLITE_OK;
  sqlite3_mutex *mutex;
  SQLITE_EXTENSION_INIT2(pApi);
  mutex = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1);
  sqlite3_mutex_enter(mutex);
  if (sqlite3_vfs_find(WB_NAME) == 0) {
    wbOrig = sqlite3_vfs_find("unix");
    if (wbOrig == 0 || wbOrig->iVersion < 2) {
      rc = SQLITE_ERROR;
    } else {
      wbVfs.szOsFile = (int)sizeof(WbFile) + wbOrig->szOsFile;
      wbVfs.mxPathname = wbOrig->mxPathname;
      rc = sqlite3_vfs_register(&wbVfs, 1);
    }
  }
  sqlite3_mutex_leave(mutex);
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_function(db, "wal_buffer_stats", 0, SQLITE_UTF8, 0, wbStats, 0, 0);
  }
  return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}
