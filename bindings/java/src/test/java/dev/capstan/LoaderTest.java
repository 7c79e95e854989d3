package dev.capstan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Where the library comes from, checked in fresh JVMs (the choice is made once per JVM). */
class LoaderTest {
    /** Run in the child JVM: prints where the binding loaded the library from, or the load error. */
    public static final class Probe {
        public static void main(String[] args) {
            try {
                System.out.println("source=" + Registry.librarySource());
            } catch (Throwable t) {
                Throwable c = t.getCause() != null ? t.getCause() : t;
                System.out.println("error=" + c);
            }
        }
    }

    static Path lib() {
        String p = System.getProperty("capstan.lib", "");
        if (p.isEmpty()) p = System.getenv().getOrDefault("CAPSTAN_LIB", "");
        return Path.of(p).toAbsolutePath();
    }

    static String probe(Map<String, String> env, String... jvmArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.addAll(List.of(jvmArgs));
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Probe.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("CAPSTAN_LIB");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return out.lines().filter(l -> l.startsWith("source=") || l.startsWith("error=")).findFirst().orElse(out);
    }

    @Test
    void thePropertyWinsOverTheEnvironment() throws Exception {
        assertEquals("source=" + lib(), probe(Map.of("CAPSTAN_LIB", "/nonexistent/libcapstan.so"),
                "-Dcapstan.lib=" + lib()));
    }

    @Test
    void theEnvironmentVariableNamesAFile() throws Exception {
        assertEquals("source=" + lib(), probe(Map.of("CAPSTAN_LIB", lib().toString())));
        String err = probe(Map.of("CAPSTAN_LIB", "/nonexistent/libcapstan.so"));
        assertTrue(err.startsWith("error=java.lang.UnsatisfiedLinkError: CAPSTAN_LIB names /nonexistent/libcapstan.so"),
                err);
    }

    @Test
    void javaLibraryPathIsSearchedWhenNeitherIsSet() throws Exception {
        Path dir = Files.createTempDirectory("capstan-lib");
        Path copy = dir.resolve(System.mapLibraryName("capstan"));
        try {
            Files.copy(lib(), copy);
            assertEquals("source=" + copy, probe(Map.of(), "-Djava.library.path=/nonexistent:" + dir));
        } finally {
            Files.deleteIfExists(copy);
            Files.deleteIfExists(dir);
        }
    }

    /** Issue 49: with no library anywhere, the error says where it looked and what to set. */
    @Test
    void aMissingLibraryNamesWhatWasTriedAndWhatToSet() throws Exception {
        Map<String, String> env = new java.util.HashMap<>();
        env.put("LD_LIBRARY_PATH", "/nonexistent");
        String err = probe(env, "-Djava.library.path=/nonexistent");
        assertTrue(err.startsWith("error=java.lang.UnsatisfiedLinkError: capstan: cannot open the native library: tried "
                + System.mapLibraryName("capstan") + " in java.library.path (/nonexistent)"), err);
        assertTrue(err.contains("Set CAPSTAN_LIB (or -Dcapstan.lib=)"), err);
    }

    @Test
    void aVirtualThreadCanExecuteAndReadErrors() throws Exception {
        java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> {
            try (Registry r = RegistryTest.adder()) {
                assertEquals("{\"sum\":5}", r.execute(List.of(Call.of("1", "add", Map.of("a", 4)))).get(0).content());
                CapstanException e = org.junit.jupiter.api.Assertions.assertThrows(CapstanException.class,
                        () -> r.tool("bad name", "", null, c -> ""));
                assertEquals("CAPSTAN_ERR_INVALID_NAME", e.status());
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        t.join(30_000);
        assertTrue(!t.isAlive());
        if (failed.get() != null) throw new AssertionError(failed.get());
    }
}
