package io.rdma4j.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unit tests of the examples jar's command line, each in a JVM of its own as a user runs it ({@code java -cp …
 * Main}): the list of examples, each one's {@code --help}, and bad options refused with the C tool's exit code, a
 * message naming the option, and the usage. No device is needed.
 */
class ExamplesCommandLineTest {

    /** The names users and scripts call: exactly these. */
    private static final List<String> NAMES = List.of("echo", "kv", "rc-pingpong", "rping", "srq-pingpong",
            "ud-pingpong", "write-bw");

    @Test
    void helpListsEveryExampleByItsName() throws Exception {
        ExampleProcess.Result help = main("--help");
        assertEquals(0, help.exit(), help.all());
        List<String> listed = help.out().lines().filter(l -> l.startsWith("  ")).map(l -> l.strip().split(" ")[0])
                .toList();
        assertEquals(NAMES, listed, help.out());
        ExampleProcess.Result unknown = main("no-such-example");
        assertEquals(2, unknown.exit(), unknown.all());
        assertTrue(unknown.err().contains("no example 'no-such-example'"), unknown.all());
    }

    @ParameterizedTest
    @ValueSource(strings = {"echo", "kv", "rc-pingpong", "rping", "srq-pingpong", "ud-pingpong", "write-bw"})
    void eachExamplePrintsItsUsage(String name) throws Exception {
        ExampleProcess.Result help = main(name, "--help");
        assertEquals(0, help.exit(), help.all());
        assertTrue(help.out().lines().count() >= 2 && Pattern.compile("-[a-zA-Z]").matcher(help.out()).find(),
                help.all());
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', value = {
        "rc-pingpong|-x|1|unknown option -x",
        "rc-pingpong|-m 1000|1|-m: the MTU is 256, 512, 1024, 2048 or 4096, not 1000",
        "rc-pingpong|-i 0|1|-i is 1..255, not 0",
        "rc-pingpong|-g 256|1|-g is 0..255, not 256",
        "ud-pingpong|-m 1024|1|ibv_ud_pingpong has no option -m",
        "srq-pingpong|-q 200 -r 100|1|rx_depth 100 is too small for 200 QPs",
        "srq-pingpong|-q 256|1|-q is 1..255, not 256",
        "srq-pingpong|--num-qp=x|1|--num-qp: not a number: x",
        "write-bw|-c|1|the client needs the server's address (-a)",
        "write-bw|-s -t 0|1|-t is 1..8192, not 0",
        "rping|-s -S 25|22|Invalid size 25",
        "kv|-c|1|the client needs the server's address (-a)",
        "kv|-s -k 0|1|-k is 1..1048576, not 0",
        "kv|-c -a 127.0.0.1 -n x|1|-n: not a number: x"})
    void badOptionsAreRefusedWithTheToolsExitCodeAMessageAndTheUsage(String name, String options, int exit,
                                                                       String message) throws Exception {
        List<String> args = new ArrayList<>(List.of(name));
        args.addAll(List.of(options.split(" ")));
        ExampleProcess.Result r = main(args.toArray(String[]::new));
        assertEquals(exit, r.exit(), r.all());
        assertTrue(r.err().contains(message), r.all());
        assertTrue(r.out().contains(Set.of("rping", "write-bw", "kv").contains(name) ? name + " -" : "Usage:"),
                r.all());
    }

    private static ExampleProcess.Result main(String... args) throws IOException, InterruptedException {
        return ExampleProcess.run(List.of(), args);
    }
}
