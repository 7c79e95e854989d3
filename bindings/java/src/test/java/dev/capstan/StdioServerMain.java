package dev.capstan;

import java.util.concurrent.CountDownLatch;

/**
 * A child process for McpTest: serves an adder over MCP on stdio until stdin ends or, with the argument
 * {@code close-on-stop}, until its tool {@code stop} was called, when the main thread closes the registry.
 */
public final class StdioServerMain {
    public static void main(String[] args) throws Exception {
        CountDownLatch stop = new CountDownLatch(1);
        Registry r = RegistryTest.adder();
        r.tool("stop", "Stops the server.", null, call -> {
            stop.countDown();
            return "stopping";
        });
        if (args.length > 0 && args[0].equals("close-on-stop")) {
            Thread server = new Thread(() -> r.serveMcpStdio(McpServer.Options.DEFAULTS), "stdio-server");
            server.start();
            stop.await();
            r.close(); // from another thread: serveMcpStdio returns
            server.join();
            System.err.println("stdio server: closed");
        } else {
            r.serveMcpStdio(McpServer.Options.DEFAULTS);
            r.close();
            System.err.println("stdio server: stdin ended");
        }
    }
}
