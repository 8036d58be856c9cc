import Foundation

/// A tiny HTTP/1.1 server in a Python subprocess on 127.0.0.1, on an ephemeral port, with the routes the tests
/// need: `/echo`, `/redirect`, `/zeros?n=` (`&report=1`: see ``nextReport()``), `/stall?n=`, `/stall-head`, `/gzip`,
/// `/gzip-bomb`, `/duplicate-length`, `/truncated`. It exits when the test closes its stdin.
final class TestServer: Sendable {
    let port: Int
    private let process: Process
    private let input: Pipe
    private let output: Pipe

    private init(port: Int, process: Process, input: Pipe, output: Pipe) {
        self.port = port
        self.process = process
        self.input = input
        self.output = output
    }

    static func start() throws -> TestServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", "-c", script]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let text = readLine(output.fileHandleForReading) ?? ""
        guard let port = Int(text) else {
            process.terminate()
            throw ServerError.noPort(text)
        }
        return TestServer(port: port, process: process, input: input, output: output)
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// What the server did for one `/zeros?n=…&report=1` response, printed when its handler ends.
    struct TransferReport: Decodable, Sendable {
        /// The body bytes the server's socket accepted: an upper bound of what can have reached the client.
        let sent: Int
        /// Whether the whole body was sent; `false` when the client closed the connection first.
        let complete: Bool
        /// The longest time one 64 KiB write was blocked: the client's TCP window stayed shut that long.
        let longestStall: Double
        /// `sent` when that longest blocked write began.
        let stalledAt: Int
    }

    /// Waits for the next ``TransferReport``: the event "a reporting `/zeros` response ended" (sent in full, or the
    /// client went away). Cancelling the caller stops the server, which ends the wait.
    func nextReport() async throws -> TransferReport {
        let handle = output.fileHandleForReading
        let line = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // A blocking read, off the cooperative pool.
                DispatchQueue.global().async { continuation.resume(returning: Self.readLine(handle)) }
            }
        } onCancel: {
            stop()
        }
        guard let line else { throw ServerError.noReport }
        return try JSONDecoder().decode(TransferReport.self, from: Data(line.utf8))
    }

    /// Stops the server without waiting for it (SIGTERM ends it at once).
    func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
    }

    enum ServerError: Error {
        case noPort(String)
        case noReport
    }

    /// One line of the server's output, without its newline; `nil` once the server has exited.
    ///
    /// Reads byte by byte, so nothing after the line is taken from the pipe (the lines are short and rare).
    private static func readLine(_ handle: FileHandle) -> String? {
        var line = Data()
        while true {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty { return nil }
            if byte.first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    private static let script = #"""
        import gzip, io, json, socket, sys, threading, time, zlib
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlparse, parse_qs

        _bomb = None
        _bomb_lock = threading.Lock()
        _report_lock = threading.Lock()

        def report(fields):
            with _report_lock:
                print(json.dumps(fields), flush=True)

        def bomb():
            global _bomb
            with _bomb_lock:
                if _bomb is None:
                    c = zlib.compressobj(9, zlib.DEFLATED, 31)
                    block = bytes(1 << 20)
                    parts = [c.compress(block) for _ in range(200)]
                    parts.append(c.flush())
                    _bomb = b"".join(parts)
                return _bomb

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def read_body(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = bytearray()
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return bytes(data), True
                        data += self.rfile.read(size)
                        self.rfile.readline()
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n), False

            def send_bytes(self, status, body, headers=()):
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def handle_any(self):
                url = urlparse(self.path)
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                p = url.path
                if p == "/echo":
                    body, chunked = self.read_body()
                    headers = [[k, v] for k, v in self.headers.items()]
                    self.send_bytes(200, body, [
                        ("X-Echo-Method", self.command),
                        ("X-Echo-Chunked", "1" if chunked else "0"),
                        ("X-Echo-Headers", json.dumps(headers)),
                        ("X-Multi", "a"), ("X-Multi", "b"),
                    ])
                elif p == "/redirect":
                    self.read_body()
                    self.send_bytes(302, b"moved", [("Location", "/echo?from=redirect")])
                elif p == "/zeros":
                    n = int(q.get("n", "0"))
                    self.send_response(200)
                    self.send_header("Content-Length", str(n))
                    self.end_headers()
                    block = bytes(1 << 16)
                    sent = 0
                    longest, stalled_at, complete = 0.0, 0, False
                    try:
                        while sent < n:
                            k = min(len(block), n - sent)
                            start = time.monotonic()
                            # sendall: blocks while the client's TCP window is shut.
                            self.wfile.write(block[:k] if k < len(block) else block)
                            took = time.monotonic() - start
                            if took > longest:
                                longest, stalled_at = took, sent
                            sent += k
                        complete = True
                    except (BrokenPipeError, ConnectionResetError):
                        self.close_connection = True
                    if q.get("report") == "1":
                        report({"sent": sent, "complete": complete, "longestStall": longest, "stalledAt": stalled_at})
                elif p == "/stall":
                    # Sends the head and `n` bytes of a 1 MiB body, then stalls until the client goes away.
                    n = int(q.get("n", "1024"))
                    self.send_response(200)
                    self.send_header("Content-Length", str(1 << 20))
                    self.end_headers()
                    self.wfile.write(bytes(n))
                    self.wfile.flush()
                    self.wait_for_close()
                elif p == "/stall-head":
                    self.wait_for_close()
                elif p == "/gzip-bomb":
                    self.send_bytes(200, bomb(), [("Content-Encoding", "gzip"), ("Content-Type", "application/octet-stream")])
                elif p == "/gzip":
                    self.send_bytes(200, gzip.compress(b"hello gzip " * 100), [("Content-Encoding", "gzip")])
                elif p == "/duplicate-length":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello!")
                    self.close_connection = True
                elif p == "/truncated":
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n123456789")
                    self.wfile.flush()
                    self.close_connection = True
                else:
                    self.send_bytes(404, b"not found")

            def wait_for_close(self):
                self.connection.settimeout(120)
                try:
                    while self.connection.recv(65536):
                        pass
                except OSError:
                    pass
                self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        server = Server(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
        server.serve_forever()
        """#
}
