package io.strata;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads the native library ({@code libstrata_jni}) once, at the first use of a class that
 * needs it.
 *
 * <p>By default it comes from the jar: {@code mvn package} puts the library cargo built at
 * {@code io/strata/native/OS-ARCH/}, and it is copied to a temporary file (deleted at exit)
 * and loaded from there, since a library cannot be loaded from inside a jar. The system
 * property {@code strata.library.path} names a library file to load instead.
 */
final class NativeLibrary {
    private static boolean loaded;

    private NativeLibrary() {}

    /** Loads the library unless it is loaded already. */
    static synchronized void load() {
        if (loaded) {
            return;
        }
        String explicit = System.getProperty("strata.library.path");
        if (explicit != null) {
            System.load(Path.of(explicit).toAbsolutePath().toString());
        } else {
            System.load(extract().toString());
        }
        loaded = true;
    }

    /** The platform's directory name in the jar, as {@code linux-x86_64}. */
    static String platform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        String osName = os.contains("linux") ? "linux"
                : os.contains("mac") ? "darwin"
                : os.contains("windows") ? "windows" : os;
        String archName = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "aarch64" : arch;
        return osName + "-" + archName;
    }

    private static String fileName() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        if (os.contains("mac")) {
            return "libstrata_jni.dylib";
        }
        if (os.contains("windows")) {
            return "strata_jni.dll";
        }
        return "libstrata_jni.so";
    }

    private static Path extract() {
        String resource = "/io/strata/native/" + platform() + "/" + fileName();
        try (InputStream in = NativeLibrary.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("this jar has no native library for " + platform()
                        + " (looked for " + resource + "): build the jar on this platform with "
                        + "`mvn package`, or set -Dstrata.library.path to a built library");
            }
            Path file = Files.createTempFile("libstrata_jni", fileName().substring(
                    fileName().lastIndexOf('.')));
            file.toFile().deleteOnExit();
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError(
                    "could not copy the native library out of the jar: " + e.getMessage());
            error.initCause(e);
            throw error;
        }
    }
}
