/* A stand-in for Windows' bcryptprimitives.dll, for running the tests under
 * Wine only; never installed or shipped.
 *
 * Rust's standard library (1.78 and later) gets its random bytes (HashMap
 * keys, among others) from ProcessPrng, which it imports from
 * bcryptprimitives.dll. Every Windows from 10 on has that DLL; Wine 8 (the
 * wine64 of Debian 12) does not, so capstan.dll fails to load there ("module
 * not found"). This DLL, placed next to the test executables (Windows looks
 * in the executable's directory first), exports ProcessPrng on top of
 * BCryptGenRandom, which Wine has. `make windows-test` builds it with
 * mingw-w64. */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG))) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
