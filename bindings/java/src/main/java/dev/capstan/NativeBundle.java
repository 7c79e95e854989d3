package dev.capstan;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * The library a released jar carries for each platform (issue 51), under
 * {@code dev/capstan/native/<os>-<arch>/} with its SHA-256 beside it. The JVM cannot map a
 * library out of a jar, so the one for this platform is copied, once, into a directory of
 * this user's: {@code capstan.cache} if set, else {@code $XDG_CACHE_HOME/capstan} or
 * {@code ~/.cache/capstan} ({@code %LOCALAPPDATA%\capstan} on Windows), in a sub-directory
 * named after the version and the file's SHA-256, so two versions (or two builds) never
 * share a file. The copy is written to a temporary file in that directory and renamed into
 * place: threads and processes racing to extract it each rename a whole file, and a loader
 * never sees a partial one.
 */
final class NativeBundle {
    private NativeBundle() {}

    static final String ROOT = "dev/capstan/native/";

    /** os-arch as the jar names it: linux-x86_64, linux-aarch64, macos-aarch64, macos-x86_64, windows-x86_64. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String o = os.startsWith("linux") ? "linux"
                : os.startsWith("mac") || os.startsWith("darwin") ? "macos"
                : os.startsWith("windows") ? "windows" : os.replace(' ', '_');
        String a = switch (arch) {
            case "amd64", "x86_64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> arch;
        };
        return o + "-" + a;
    }

    /**
     * The path of this platform's library extracted from the jar, or null when the jar
     * carries none for this platform (a jar built from the source tree carries none).
     */
    static Path extract() {
        String dir = ROOT + platform() + "/";
        String file = System.mapLibraryName("capstan");
        ClassLoader loader = NativeBundle.class.getClassLoader();
        String sha;
        try (InputStream in = loader.getResourceAsStream(dir + file + ".sha256")) {
            if (in == null) return null;
            sha = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
        } catch (IOException e) {
            throw new UncheckedIOException("capstan: cannot read " + dir + file + ".sha256 from the jar", e);
        }
        if (!sha.matches("[0-9a-f]{64}")) {
            throw new UnsatisfiedLinkError("capstan: the jar's " + dir + file + ".sha256 is not a SHA-256: " + sha);
        }
        Path target = cacheDir().resolve(Registry.class.getPackage().getImplementationVersion() == null
                ? sha.substring(0, 16) : Registry.class.getPackage().getImplementationVersion() + "-" + sha.substring(0, 16))
                .resolve(file);
        try {
            if (Files.isRegularFile(target)) return target;
            Path parent = target.getParent();
            Files.createDirectories(parent);
            Path part = Files.createTempFile(parent, file, ".part");
            try {
                try (InputStream in = loader.getResourceAsStream(dir + file)) {
                    if (in == null) throw new UnsatisfiedLinkError("capstan: the jar lists " + dir + file + " but lacks it");
                    Files.copy(in, part, StandardCopyOption.REPLACE_EXISTING);
                }
                try {
                    Files.move(part, target, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(part, target, StandardCopyOption.REPLACE_EXISTING);
                } catch (IOException e) {
                    // Another process renamed its copy into place first (Windows refuses to
                    // replace a file that is loaded): theirs is the same bytes.
                    if (!Files.isRegularFile(target)) throw e;
                }
            } finally {
                Files.deleteIfExists(part);
            }
            return target;
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("capstan: cannot extract the library for " + platform() + " from the jar to "
                    + target + " (" + e + "); set -Dcapstan.cache= to a writable directory, or CAPSTAN_LIB to a library");
        }
    }

    /** This user's cache directory for capstan, created private (0700) where POSIX allows. */
    private static Path cacheDir() throws UnsatisfiedLinkError {
        String prop = System.getProperty("capstan.cache");
        Path dir;
        if (prop != null && !prop.isBlank()) {
            dir = Path.of(prop);
        } else if (platform().startsWith("windows") && System.getenv("LOCALAPPDATA") != null) {
            dir = Path.of(System.getenv("LOCALAPPDATA"), "capstan");
        } else if (System.getenv("XDG_CACHE_HOME") != null && !System.getenv("XDG_CACHE_HOME").isBlank()) {
            dir = Path.of(System.getenv("XDG_CACHE_HOME"), "capstan");
        } else {
            dir = Path.of(System.getProperty("user.home"), ".cache", "capstan");
        }
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir);
                if (FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
                    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
                }
            }
        } catch (IOException e) {
            throw new UnsatisfiedLinkError("capstan: cannot create the cache directory " + dir + " (" + e
                    + "); set -Dcapstan.cache= to a writable directory, or CAPSTAN_LIB to a library");
        }
        return dir;
    }
}
