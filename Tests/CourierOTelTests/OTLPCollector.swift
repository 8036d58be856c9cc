import Courier
import CourierTestServer
import Foundation

/// A span as swift-otel exported it over OTLP/HTTP JSON, decoded by ``OTLPCollector``.
struct ExportedSpan: Sendable {
    /// OTLP's span kinds (`SpanKind` in `trace.proto`).
    enum Kind: Int, Sendable, CustomStringConvertible {
        case unspecified = 0
        case `internal` = 1
        case server = 2
        case client = 3
        case producer = 4
        case consumer = 5

        var description: String {
            switch self {
            case .unspecified: "UNSPECIFIED"
            case .internal: "INTERNAL"
            case .server: "SERVER"
            case .client: "CLIENT"
            case .producer: "PRODUCER"
            case .consumer: "CONSUMER"
            }
        }
    }

    /// The trace ID, 32 lowercase hex digits.
    var traceID: String
    /// The span ID, 16 lowercase hex digits.
    var spanID: String
    /// The parent's span ID, or `nil` for a root span.
    var parentSpanID: String?
    var name: String
    var kind: Kind
    /// Each attribute's value as text (an integer as its digits, an array as `[a, b]`).
    var attributes: [String: String]
    /// Each event as `name {key: value, …}`.
    var events: [String]
    /// The status code (`1` ok, `2` error) and message, when set.
    var status: String?
}

/// The OTLP/HTTP JSON trace receiver the tests point swift-otel's exporter at, as a route of the embedded
/// ``TestServer`` (`POST /v1/traces`), answering each export with an empty `ExportTraceServiceResponse`.
final class OTLPCollector: Sendable {
    private let state = LockedBox(State())

    private struct State {
        var bodies: [String] = []
        var spans: [ExportedSpan] = []
        var errors: [String] = []
    }

    /// The path the exporter posts to.
    static let path = "/v1/traces"

    /// Registers the receiver on `server`.
    func install(on server: TestServer) {
        server.register("POST", Self.path) { [self] request in
            receive(request)
        }
    }

    /// Every export request's body, as received.
    var bodies: [String] { state.withLock { $0.bodies } }
    /// Every span received, once each (by span ID), in the order received.
    var spans: [ExportedSpan] {
        state.withLock { state in
            var seen = Set<String>()
            return state.spans.filter { seen.insert($0.spanID).inserted }
        }
    }
    /// Why a received body could not be decoded, if any could not.
    var errors: [String] { state.withLock { $0.errors } }

    private func receive(_ request: TestServerRequest) -> TestServerResponse {
        let body = String(decoding: request.body, as: UTF8.self)
        do {
            let contentType = request.header("Content-Type") ?? ""
            guard contentType.hasPrefix("application/json") else {
                throw DecodingFailure("expected OTLP/HTTP JSON, got Content-Type \(contentType)")
            }
            let export = try JSONDecoder().decode(Wire.Export.self, from: Data(request.body))
            let spans = try export.resourceSpans.flatMap { resource in
                try resource.scopeSpans.flatMap { scope in try scope.spans.map(Self.span) }
            }
            state.withLock { state in
                state.bodies.append(body)
                state.spans += spans
            }
            return .json("{}")
        } catch {
            state.withLock { state in
                state.bodies.append(body)
                state.errors.append("\(error)")
            }
            return .text("\(error)", status: 400)
        }
    }

    private static func span(_ wire: Wire.Span) throws -> ExportedSpan {
        let parent = try wire.parentSpanId.flatMap { $0.isEmpty ? nil : try hexID($0, bytes: 8) }
        return ExportedSpan(
            traceID: try hexID(wire.traceId, bytes: 16),
            spanID: try hexID(wire.spanId, bytes: 8),
            parentSpanID: parent,
            name: wire.name,
            kind: ExportedSpan.Kind(rawValue: wire.kind ?? 0) ?? .unspecified,
            attributes: Dictionary(
                (wire.attributes ?? []).map { ($0.key, $0.value.text) }, uniquingKeysWith: { first, _ in first }),
            events: (wire.events ?? []).map { event in
                let attributes = (event.attributes ?? []).map { "\($0.key): \($0.value.text)" }
                return "\(event.name) {\(attributes.joined(separator: ", "))}"
            },
            status: wire.status.map { "\($0.code ?? 0) \($0.message ?? "")" }
        )
    }

    /// A trace or span ID as lowercase hex: OTLP JSON specifies hex, but SwiftProtobuf's JSON encoding (which
    /// swift-otel 1.6.0 uses) writes `bytes` fields as base64; both are accepted, told apart by length.
    static func hexID(_ text: String, bytes count: Int) throws -> String {
        if text.count == count * 2, text.allSatisfy(\.isHexDigit) { return text.lowercased() }
        guard let data = Data(base64Encoded: text), data.count == count else {
            throw DecodingFailure("not a \(count)-byte ID in hex or base64: \(text)")
        }
        return data.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
    }

    struct DecodingFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The parts of `ExportTraceServiceRequest` in its JSON encoding that the tests read.
    private enum Wire {
        struct Export: Decodable {
            var resourceSpans: [ResourceSpans]
        }

        struct ResourceSpans: Decodable {
            var scopeSpans: [ScopeSpans]
        }

        struct ScopeSpans: Decodable {
            var spans: [Span]
        }

        struct Span: Decodable {
            var traceId: String
            var spanId: String
            var parentSpanId: String?
            var name: String
            var kind: Int?
            var attributes: [KeyValue]?
            var events: [Event]?
            var status: Status?
        }

        struct Event: Decodable {
            var name: String
            var attributes: [KeyValue]?
        }

        struct Status: Decodable {
            var code: Int?
            var message: String?
        }

        struct KeyValue: Decodable {
            var key: String
            var value: AnyValue
        }

        /// `AnyValue`: 64-bit integers arrive as JSON strings (proto3 JSON), other scalars as themselves.
        struct AnyValue: Decodable {
            var text: String

            private enum CodingKeys: String, CodingKey {
                case stringValue, intValue, boolValue, doubleValue, arrayValue
            }

            private struct ArrayValue: Decodable {
                var values: [AnyValue]?
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                if let string = try container.decodeIfPresent(String.self, forKey: .stringValue) {
                    text = string
                } else if let integer = try? container.decodeIfPresent(String.self, forKey: .intValue) {
                    text = integer
                } else if let integer = try container.decodeIfPresent(Int64.self, forKey: .intValue) {
                    text = "\(integer)"
                } else if let bool = try container.decodeIfPresent(Bool.self, forKey: .boolValue) {
                    text = "\(bool)"
                } else if let double = try container.decodeIfPresent(Double.self, forKey: .doubleValue) {
                    text = "\(double)"
                } else if let array = try container.decodeIfPresent(ArrayValue.self, forKey: .arrayValue) {
                    text = "[" + (array.values ?? []).map(\.text).joined(separator: ", ") + "]"
                } else {
                    text = ""
                }
            }
        }
    }
}

extension [ExportedSpan] {
    /// The spans as an indented tree (children under their parent), one line each: name, kind, IDs and the
    /// attributes named in `keys` that the span has.
    func tree(keys: [String]) -> String {
        let ids = Set(map(\.spanID))
        var lines: [String] = []
        func add(_ span: ExportedSpan, depth: Int) {
            let attributes = keys.compactMap { key in span.attributes[key].map { "\(key)=\($0)" } }
            let parent = span.parentSpanID ?? "none"
            lines.append(
                String(repeating: "    ", count: depth)
                    + "\(span.name) [\(span.kind)] trace=\(span.traceID) span=\(span.spanID) parent=\(parent)"
                    + (attributes.isEmpty ? "" : " " + attributes.joined(separator: " ")))
            for event in span.events {
                lines.append(String(repeating: "    ", count: depth + 1) + "event: \(event)")
            }
            for child in filter({ $0.parentSpanID == span.spanID }) {
                add(child, depth: depth + 1)
            }
        }
        for root in filter({ $0.parentSpanID.map { !ids.contains($0) } ?? true }) {
            add(root, depth: 0)
        }
        return lines.joined(separator: "\n")
    }
}
