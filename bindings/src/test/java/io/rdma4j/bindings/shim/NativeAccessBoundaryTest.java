package io.rdma4j.bindings.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one module that applications grant native access must not lend it out: an application module on the module
 * path can neither compile against nor reflect into its packages. Runs javac and java as real processes, the way an
 * application is built and started, with a control run that is let in ({@code --add-exports}) so that the refusal
 * is the boundary's and not the harness's.
 */
class NativeAccessBoundaryTest {

    private static final Set<String> RDMA4J_MODULES = Set.of("io.rdma4j.verbs", "io.rdma4j.cm");

    @TempDir
    Path work;

    @Test
    void everyPackageIsExportedOnlyToRdma4jsOwnModules() {
        ModuleDescriptor descriptor = Pointers.class.getModule().getDescriptor();
        assertEquals(Set.of("io.rdma4j.bindings.verbs", "io.rdma4j.bindings.shim"), descriptor.packages().stream()
                .filter(p -> descriptor.exports().stream().anyMatch(e -> e.source().equals(p)))
                .collect(java.util.stream.Collectors.toSet()));
        for (ModuleDescriptor.Exports export : descriptor.exports()) {
            assertTrue(export.isQualified(), export + " is exported to everyone");
            assertTrue(RDMA4J_MODULES.containsAll(export.targets()), export + " names a module outside rdma4j");
        }
        assertTrue(descriptor.opens().isEmpty(), "opens " + descriptor.opens());
    }

    @Test
    void anApplicationModuleCannotCompileAgainstThePointers() throws Exception {
        Path source = application("import io.rdma4j.bindings.shim.Pointers;",
                "System.out.println(Pointers.ALL.byteSize());");
        Result compile = run(javac(source, List.of()));
        assertTrue(compile.exit != 0, "compiled: " + compile.output);
        assertTrue(compile.output.contains("package io.rdma4j.bindings.shim is declared in module io.rdma4j.bindings, which"
                + " does not export it to module app"), compile.output);
        // The control: the same source compiles when the package is exported to it, so the refusal above is the
        // module boundary's.
        Result control = run(javac(source, List.of("--add-exports", "io.rdma4j.bindings/io.rdma4j.bindings.shim=app")));
        assertEquals(0, control.exit, control.output);
    }

    @Test
    void anApplicationModuleCannotReflectIntoThePointersNorLookUpADowncall() throws Exception {
        Path source = application("", """
                try {
                    Object all = Class.forName("io.rdma4j.bindings.shim.Pointers").getField("ALL").get(null);
                    System.out.println("reached " + all);
                } catch (IllegalAccessException refused) {
                    System.out.println("field refused");
                }
                try {
                    java.lang.invoke.MethodHandles.lookup().findStatic(
                            Class.forName("io.rdma4j.bindings.verbs.RdmaCore"), "ibv_get_device_list",
                            java.lang.invoke.MethodType.methodType(java.lang.foreign.MemorySegment.class,
                                    java.lang.foreign.MemorySegment.class));
                    System.out.println("reached a downcall");
                } catch (IllegalAccessException refused) {
                    System.out.println("downcall refused");
                }
                """);
        Result compile = run(javac(source, List.of()));
        assertEquals(0, compile.exit, compile.output);
        Result refused = run(java(List.of()));
        assertEquals(0, refused.exit, refused.output);
        assertEquals("field refused\ndowncall refused\n", refused.output);
        Result control = run(java(List.of("--add-exports", "io.rdma4j.bindings/io.rdma4j.bindings.shim=app",
                "--add-exports", "io.rdma4j.bindings/io.rdma4j.bindings.verbs=app")));
        assertEquals(0, control.exit, control.output);
        assertTrue(control.output.startsWith("reached MemorySegment{"), control.output);
        assertTrue(control.output.endsWith("reached a downcall\n"), control.output);
    }

    /** Writes module {@code app}, which requires the bindings: {@code imports}, and {@code body} as its main method's. */
    private Path application(String imports, String body) throws IOException {
        Path module = Files.createDirectories(work.resolve("src/app"));
        Files.writeString(module.resolve("module-info.java"), "module app { requires io.rdma4j.bindings; }\n");
        Path main = Files.createDirectories(module.resolve("app")).resolve("Main.java");
        return Files.writeString(main, """
                package app;
                %s
                public class Main {
                    public static void main(String[] args) throws Exception {
                %s
                    }
                }
                """.formatted(imports, body));
    }

    private List<String> javac(Path main, List<String> extra) {
        List<String> command = new ArrayList<>(List.of(tool("javac"), "-d", work.resolve("out").toString(),
                "-p", bindings()));
        command.addAll(extra);
        command.add(main.getParent().getParent().resolve("module-info.java").toString());
        command.add(main.toString());
        return command;
    }

    private List<String> java(List<String> extra) {
        List<String> command = new ArrayList<>(List.of(tool("java"), "--enable-native-access=io.rdma4j.bindings",
                "-p", bindings() + java.io.File.pathSeparator + work.resolve("out")));
        command.addAll(extra);
        command.addAll(List.of("-m", "app/app.Main"));
        return command;
    }

    /** Where this JVM found the bindings' classes (a jar or a classes directory). */
    private static String bindings() {
        try {
            return Paths.get(Pointers.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String tool(String name) {
        return Path.of(System.getProperty("java.home"), "bin", name).toString();
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "still running: " + command);
        return new Result(process.exitValue(), output);
    }
}
