import Foundation

/// What the command line asked for: which mode to run and how long to measure.
///
/// Every value has a default, so `courier-loopback` alone runs the full matrix against the embedded server in a
/// child process, the client and the server pinned to different CPUs where there are two (see ``Pinning``).
/// A value that does not parse is reported with ``OptionsError`` rather than silently replaced.
struct Options: Sendable {
    /// Where the server runs.
    enum ServerMode: Sendable, Equatable {
        /// In this process, on the same NIO event loops and cooperative threads as the clients.
        case inProcess
        /// In a child process (this executable with `--serve`), so client and server CPU can be told apart.
        case childProcess
        /// An external server at this URL; it must answer `GET /tiny` with the tiny JSON body.
        case external(URL)
    }

    /// Seconds measured per cell (one client × concurrency × decode).
    var seconds: Double = 3
    /// Seconds of unmeasured traffic before each cell.
    var warmup: Double = 0.5
    /// How many times the interleaved matrix is repeated; medians are taken over rounds.
    var rounds: Int = 3
    /// How many turns each client of a cell takes: the cell's seconds are measured in this many slices, the clients
    /// alternating slice by slice (see `runMatrix`).
    var slices: Int = 6
    /// The concurrency levels measured.
    var concurrencies: [Int] = [1, 64]
    /// The clients measured, by ``ClientKind/rawValue``; all of them by default.
    var clients: [ClientKind] = ClientKind.matrixDefault
    /// Where the server runs: in a child process unless asked otherwise (`--auth-load` needs it in this process).
    var server: ServerMode = .childProcess
    /// Whether `--server-process`, `--server-in-process` or `--url` chose ``server``.
    var serverChosen = false
    /// Whether to pin the client and the child-process server to different CPUs (`--no-pin` turns it off).
    var pins = true
    /// The client's CPU and the server's (`--cpus`); by default the first two CPUs this process may run on.
    var cpus: (client: Int, server: Int)?
    /// The CPU `--serve` pins itself to (`--cpu`), if any; the child-process server is started with it.
    var serveCPU: Int?
    /// The protocols measured, interleaved in each round: plain HTTP only by default.
    var protocols: [WireProtocol] = [.http]
    /// Connections per host for both AsyncHTTPClient clients.
    var connections: Int = 64
    /// When set, run the scale test with this many requests in flight instead of the matrix.
    var scale: Int?
    /// The client the scale test drives: Courier on AsyncHTTPClient by default, or raw AsyncHTTPClient to compare.
    var scaleClient: ClientKind = .courierAHC
    /// When set, run the auth-under-load test with this many concurrent requests instead of the matrix.
    var authLoad: Int?
    /// With `--auth-load`: the client's `maxConcurrentRequests` (`nil`: the pool size; 0: no limit).
    var authLimit: Int?
    /// Where to write an SVG bar chart of the matrix's median req/s per client, if anywhere.
    var svgPath: String?
    /// The delay, in seconds, of each scale-test request (`/delay/{delay}`).
    var delay: Double = 0.1
    /// When `true`, only serve: start the embedded server, print its URL, and run until stopped (the harness's child
    /// server, started with `COURIER_LOOPBACK_CHILD` set, also ends when its stdin closes).
    var serveOnly = false
    /// The port for `--serve`; `0` picks a free one.
    var port: Int = 0
    /// With `--requests N`: instead of the matrix, each client sends exactly N requests one after another, untimed,
    /// so that an instruction counter (`valgrind --tool=callgrind`) can divide by a known count.
    var requests: Int?
    /// With `--requests`: decode each body as JSON.
    var decodeRequests = false

    /// The usage text printed by `--help` and after a bad option.
    static let usage = """
        usage: courier-loopback [options]
          --seconds S         seconds measured per cell (default 3)
          --warmup S          unmeasured seconds before each cell (default 0.5)
          --rounds N          interleaved repetitions; medians are reported (default 3)
          --slices N          turns per client within a cell: the clients alternate in slices of
                              seconds/N, so a change in the machine's speed reaches them alike (default 6)
          --concurrency A,B   concurrency levels (default 1,64)
          --clients LIST      any of courier-ahc,raw-ahc,raw-ahc-idle,raw-ahc-task,courier-transport,
                              courier-urlsession,raw-urlsession,openapi-ahc,openapi-courier (default: these),
                              courier-instant,raw-ahc-delegate,raw-ahc-delegate-idle; raw-ahc-idle is raw-ahc
                              with the 60 s read timeout Courier's transport sets by default, raw-ahc-task is
                              that with each request in a child task of its own, as Courier runs each call,
                              courier-transport is Courier's AsyncHTTPClient transport driven directly, without
                              the pipeline; not in the default list: courier-instant, Courier's pipeline on a
                              transport that answers at once, without a network (for count-instructions), and
                              (http only) raw-ahc-delegate, AsyncHTTPClient's delegate-based API, and
                              raw-ahc-delegate-idle, that API with an idle timer armed once per request and a
                              task-cancellation handler
          --protocols LIST    any of http,https,h2 (default http): plain HTTP/1.1, HTTP/1.1 over TLS, HTTP/2
                              over TLS (ALPN), each against its own embedded server, interleaved in each round;
                              the URLSession clients are measured over http only (no custom CA on Linux)
          --connections N     connections per host for both AsyncHTTPClient clients (default 64)
          --server-process    run the embedded server in a child process, so client CPU excludes it (the
                              default, except with --auth-load)
          --server-in-process run the embedded server in this process, on the clients' event loops and
                              threads: client CPU then includes the server's
          --no-pin            do not pin; by default, with the server in a child process and at least two
                              CPUs allowed, the client is pinned to one CPU and the server to another
                              (sched_setaffinity, Linux only); the header says which, or why not
          --cpus C,S          pin the client to CPU C and the child-process server to CPU S (default: the
                              first two CPUs this process may run on)
          --url URL           use an external server; it must answer GET /tiny (see --serve)
          --scale N           instead of the matrix: N requests at once (see --scale-client)
          --delay S           seconds each scale request waits on the server (default 0.1)
          --scale-client K    courier-ahc (default) or raw-ahc, to compare the memory per request
          --auth-load N       instead of the matrix: N concurrent requests on a rejected token (one token
                              refresh, rejected calls replayed once) vs N with a valid token, per round; the
                              server runs in this process (it counts the tokens), not pinned
          --auth-limit N      with --auth-load: the client's maxConcurrentRequests (default: --connections;
                              0: no limit, so every queued call is signed with the rejected token)
          --svg PATH          also write a bar chart of the matrix's median req/s per client to PATH
          --serve             only run the embedded server (with /tiny) and print its URL; with --protocols,
                              also the TLS servers' URLs and their root certificate
          --port P            the port for --serve (default: any free port)
          --cpu N             with --serve: pin the server to CPU N (the child-process server gets it)
          --requests N        instead of the matrix: each client sends exactly N requests, one at a time,
                              untimed, and prints nothing else: for an instruction counter, which tells the
                              cost of one request from two runs with different N (Benchmarks/count-instructions)
          --decode            with --requests: decode each body as JSON
        """

    /// Parses `arguments` (without the executable's name).
    ///
    /// - Throws: ``OptionsError`` for an unknown option, a missing value or a value out of range.
    init(arguments: [String]) throws {
        var remaining = arguments[...]
        while let option = remaining.popFirst() {
            func value() throws -> String {
                guard let next = remaining.popFirst() else { throw OptionsError.missingValue(option) }
                return next
            }
            switch option {
            case "--seconds": seconds = try Self.positive(Double(try value()), option)
            case "--warmup": warmup = try Self.nonNegative(Double(try value()), option)
            case "--rounds": rounds = Int(try Self.positive(Int(try value()).map(Double.init), option))
            case "--slices": slices = Int(try Self.positive(Int(try value()).map(Double.init), option))
            case "--connections": connections = Int(try Self.positive(Int(try value()).map(Double.init), option))
            case "--requests": requests = Int(try Self.positive(Int(try value()).map(Double.init), option))
            case "--decode": decodeRequests = true
            case "--scale": scale = Int(try Self.positive(Int(try value()).map(Double.init), option))
            case "--auth-load": authLoad = Int(try Self.positive(Int(try value()).map(Double.init), option))
            case "--auth-limit":
                guard let limit = Int(try value()), limit >= 0 else {
                    throw OptionsError.invalidValue(option)
                }
                authLimit = limit
            case "--svg": svgPath = try value()
            case "--delay": delay = try Self.nonNegative(Double(try value()), option)
            case "--port": port = Int(try Self.nonNegative(Int(try value()).map(Double.init), option))
            case "--server-process":
                server = .childProcess
                serverChosen = true
            case "--server-in-process":
                server = .inProcess
                serverChosen = true
            case "--no-pin": pins = false
            case "--cpus":
                let numbers = try value().split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard numbers.count == 2, let client = numbers[0], let server = numbers[1], client >= 0, server >= 0,
                    client != server
                else { throw OptionsError.invalidValue(option) }
                cpus = (client, server)
            case "--cpu": serveCPU = Int(try Self.nonNegative(Int(try value()).map(Double.init), option))
            case "--scale-client":
                guard let kind = ClientKind(rawValue: try value()), kind == .courierAHC || kind == .rawAHC else {
                    throw OptionsError.invalidValue(option)
                }
                scaleClient = kind
            case "--serve": serveOnly = true
            case "--concurrency":
                let levels = try value().split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                let valid = levels.compactMap { $0 }.filter { $0 > 0 }
                guard !valid.isEmpty, valid.count == levels.count else { throw OptionsError.invalidValue(option) }
                concurrencies = valid
            case "--clients":
                let names = try value().split(separator: ",").map { String($0) }
                let kinds = names.compactMap(ClientKind.init(rawValue:))
                guard !kinds.isEmpty, kinds.count == names.count else { throw OptionsError.invalidValue(option) }
                clients = kinds
            case "--protocols":
                let names = try value().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let kinds = names.compactMap(WireProtocol.init(rawValue:))
                guard !kinds.isEmpty, kinds.count == names.count, Set(kinds).count == kinds.count else {
                    throw OptionsError.invalidValue(option)
                }
                protocols = kinds
            case "--url":
                let text = try value()
                guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil
                else { throw OptionsError.invalidValue(option) }
                server = .external(url)
                serverChosen = true
            case "--help", "-h": throw OptionsError.helpRequested
            default: throw OptionsError.unknownOption(option)
            }
        }
        // The auth test registers its token routes on the server, so it needs the server in this process.
        if authLoad != nil, !serverChosen {
            server = .inProcess
        }
    }

    private static func positive(_ value: Double?, _ option: String) throws -> Double {
        guard let value, value > 0, value.isFinite else { throw OptionsError.invalidValue(option) }
        return value
    }

    private static func nonNegative(_ value: Double?, _ option: String) throws -> Double {
        guard let value, value >= 0, value.isFinite else { throw OptionsError.invalidValue(option) }
        return value
    }
}

/// Why the command line was not accepted.
enum OptionsError: Error, CustomStringConvertible {
    /// `--help` or `-h`: print the usage and exit successfully.
    case helpRequested
    /// An option this tool does not know.
    case unknownOption(String)
    /// An option given last, without its value.
    case missingValue(String)
    /// A value that does not parse or is out of range.
    case invalidValue(String)

    var description: String {
        switch self {
        case .helpRequested: "help requested"
        case .unknownOption(let option): "unknown option \(option)"
        case .missingValue(let option): "\(option) needs a value"
        case .invalidValue(let option): "invalid value for \(option)"
        }
    }
}
