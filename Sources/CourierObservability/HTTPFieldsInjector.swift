#if Observability
    public import HTTPTypes
    public import Instrumentation

    /// Writes trace-context values (such as W3C `traceparent` and `tracestate`) into request header fields.
    ///
    /// The instrument decides the keys and the format; a key that is not a valid header name is skipped.
    public struct HTTPFieldsInjector: Injector {
        /// Creates an injector.
        public init() {}

        /// Sets header `key` to `value`, replacing any value it had.
        public func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
            guard let name = HTTPField.Name(key) else { return }
            carrier[name] = value
        }
    }
#endif
