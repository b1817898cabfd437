import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;

/**
 * The sample workload of k8ts' tests and demos: a tiny HTTP server that answers like a Spring Boot
 * application with the actuator, built only on the JDK's own {@code jdk.httpserver} module.
 *
 * <ul>
 *   <li>{@code GET /} answers {@code spring-server <version> on <hostname>\n} (text/plain), so a
 *       client can see which version and which pod answered (rolling updates, Services).
 *   <li>{@code GET /actuator/health} answers {@code {"status":"UP"}} (application/json), the path
 *       Spring Boot's actuator uses for liveness/readiness probes.
 *   <li>Anything else is 404; methods other than GET and HEAD are 405.
 * </ul>
 *
 * <p>Configuration from the environment: {@code SPRING_SERVER_VERSION} (baked into the image by
 * its Dockerfile; "dev" when unset) and {@code SERVER_PORT} (Spring's name; 8080 when unset). It
 * listens on 0.0.0.0.
 *
 * <p>Lifecycle: prints {@code Started spring-server <version> on port <port>} once listening. On
 * SIGTERM or SIGINT (what the kubelet and {@code docker stop} send) it prints {@code
 * spring-server <version> shutting down}, keeps serving for {@code SHUTDOWN_DELAY_SECONDS} (2 by
 * default) while load balancers take it out of rotation, then stops accepting, lets exchanges in
 * flight finish for at most one second, and exits with status 0.
 */
public final class SpringServer {
  private static final int DEFAULT_PORT = 8080;

  /**
   * Seconds it keeps serving after SIGTERM before it stops accepting ({@code SHUTDOWN_DELAY_SECONDS}
   * overrides), so that connections routed to it while its endpoint is being removed still succeed.
   */
  private static final String DEFAULT_SHUTDOWN_DELAY_SECONDS = "2";

  /** Seconds {@link HttpServer#stop} waits for exchanges in flight, as a short graceful drain. */
  private static final int STOP_DRAIN_SECONDS = 1;

  private SpringServer() {}

  public static void main(String[] args) throws IOException {
    String version = envOr("SPRING_SERVER_VERSION", "dev");
    int port = Integer.parseInt(envOr("SERVER_PORT", String.valueOf(DEFAULT_PORT)));
    String hostname = hostname();
    long shutdownDelayMillis =
        (long) (1000 * Double.parseDouble(envOr("SHUTDOWN_DELAY_SECONDS", DEFAULT_SHUTDOWN_DELAY_SECONDS)));

    // com.sun.net.httpserver gives no access to the accepted sockets; its implementation sets
    // TCP_NODELAY on every accepted connection when this property is true. The property is read
    // once, when the implementation's configuration class loads, so it must be set before the
    // server is created.
    if (System.getProperty("sun.net.httpserver.nodelay") == null) {
      System.setProperty("sun.net.httpserver.nodelay", "true");
    }

    HttpServer server = HttpServer.create(new InetSocketAddress("0.0.0.0", port), 128);
    ExecutorService workers =
        Executors.newFixedThreadPool(Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));
    server.setExecutor(workers);

    byte[] greeting =
        ("spring-server " + version + " on " + hostname + "\n").getBytes(StandardCharsets.UTF_8);
    byte[] health = "{\"status\":\"UP\"}".getBytes(StandardCharsets.UTF_8);
    server.createContext(
        "/", exchange -> respond(exchange, "/", "text/plain; charset=utf-8", greeting));
    server.createContext(
        "/actuator/health",
        exchange -> respond(exchange, "/actuator/health", "application/json", health));

    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  System.out.println("spring-server " + version + " shutting down");
                  System.out.flush();
                  // Keep serving for a moment: the kubelet signals as soon as the pod is deleted,
                  // while Services stop sending new connections only once the endpoint change has
                  // reached every kube-proxy. (Kubernetes users add a preStop sleep for this.)
                  try {
                    Thread.sleep(shutdownDelayMillis);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  server.stop(STOP_DRAIN_SECONDS);
                  workers.shutdown();
                  try {
                    workers.awaitTermination(STOP_DRAIN_SECONDS, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  System.out.flush();
                },
                "shutdown"));
    // The JVM's own SIGTERM handling runs the shutdown hooks but then exits with 143 (128 +
    // SIGTERM). A stop requested by the kubelet is a clean end, so exit with 0 instead; the
    // shutdown hook above still runs through System.exit.
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name), signal -> System.exit(0));
    }

    server.start();
    System.out.println("Started spring-server " + version + " on port " + port);
    System.out.flush();
  }

  /**
   * Answers one exchange: {@code body} with {@code contentType} when the request path is exactly
   * {@code path} (the context matches by prefix), 404 for other paths, 405 for methods other
   * than GET/HEAD.
   */
  private static void respond(HttpExchange exchange, String path, String contentType, byte[] body)
      throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      if (!exchange.getRequestURI().getPath().equals(path)) {
        sendText(exchange, 404, "not found\n");
        return;
      }
      if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        sendText(exchange, 405, "method not allowed\n");
        return;
      }
      exchange.getResponseHeaders().set("Content-Type", contentType);
      if (method.equals("HEAD")) {
        exchange.sendResponseHeaders(200, -1);
        return;
      }
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  private static void sendText(HttpExchange exchange, int status, String text) throws IOException {
    byte[] body = text.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /**
   * The kernel's hostname of this UTS namespace (the pod name under Kubernetes, the short
   * container id under plain Docker). Read from /proc because the JDK only offers it through
   * {@link InetAddress#getLocalHost}, which also resolves the name and fails without DNS.
   */
  private static String hostname() {
    try {
      String name = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
      if (!name.isEmpty()) {
        return name;
      }
    } catch (IOException e) {
      // Not Linux or no /proc: fall through.
    }
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isEmpty()) {
      return env;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "unknown";
    }
  }

  private static String envOr(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }
}
