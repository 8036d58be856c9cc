import Testing

/// The conformance suites, run one test at a time.
///
/// Their assertions include wall-clock bounds (a deadline or a cancellation ends a call promptly); run beside each
/// other's 64 MiB transfers and 1,000-request bursts on a small machine, those bounds would measure the machine's
/// load instead of the transport. Serialized, the whole conformance run takes about a minute.
@Suite("Conformance", .serialized)
enum Conformance {}
