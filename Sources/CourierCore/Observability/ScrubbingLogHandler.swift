public import Logging

/// A `LogHandler` that scrubs a call's secrets out of everything logged through it, then hands it to another.
///
/// For the logger a transport and its HTTP library get: they log request and response heads and URLs verbatim
/// (AsyncHTTPClient, at trace level, logs each response head with its `Location`). The message, every metadata
/// value (the handler's own and the event's, nested ones too) and the description of an attached error go
/// through ``Redactor/scrub(_:secrets:)``. Level, source and location pass unchanged.
struct ScrubbingLogHandler: LogHandler {
    /// The handler that writes the scrubbed events.
    var base: any LogHandler
    let redactor: Redactor
    let secrets: Redactor.Secrets
    /// Events below this level are dropped (see ``Redactor/scrubbingForTransport(_:secrets:)``).
    var floor: Logger.Level = .trace

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue.mapValues(scrub) }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue.map(scrub) }
    }

    func log(event: LogEvent) {
        guard event.level >= floor else { return }
        var event = event
        event.message = Logger.Message(stringLiteral: redactor.scrub(event.message.description, secrets: secrets))
        event.metadata = event.metadata?.mapValues(scrub)
        event.error = event.error.map { ScrubbedError(description: redactor.scrub("\($0)", secrets: secrets)) }
        base.log(event: event)
    }

    private func scrub(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(redactor.scrub(text, secrets: secrets))
        case .stringConvertible(let item):
            Self.keepingAttributes(of: item, .string(redactor.scrub(item.description, secrets: secrets)))
        case .dictionary(let dictionary): .dictionary(dictionary.mapValues(scrub))
        case .array(let array): .array(array.map(scrub))
        }
    }

    /// `scrubbed` with the metadata attributes `item` carries (swift-log's SLG-0004: `.attributed(userID,
    /// attributes: [...])`, a privacy marker a handler further down reads), which a plain `.string` would drop.
    /// swift-log's carrier type is not public: it is known by its name.
    private static func keepingAttributes(
        of item: any CustomStringConvertible & Sendable, _ scrubbed: Logger.Metadata.Value
    ) -> Logger.Metadata.Value {
        guard String(reflecting: type(of: item)).hasSuffix(".AttributedStringCarrier") else { return scrubbed }
        var value = scrubbed
        value.attributes = Logger.Metadata.Value.stringConvertible(item).attributes
        return value
    }

    /// An error logged through the handler, reduced to its scrubbed description.
    private struct ScrubbedError: Error, CustomStringConvertible {
        let description: String
    }
}

extension Redactor {
    /// `logger` with everything logged through it scrubbed of `secrets` and of every sensitive `key=value` pair.
    ///
    /// Courier hands such a logger to transports, whose HTTP libraries log heads and URLs as they are; use it
    /// likewise for a logger you pass to code that may log a request.
    ///
    /// ```swift
    /// let logger = redactor.scrubbing(context.logger, secrets: redactor.secrets(of: request.head))
    /// ```
    ///
    /// - Parameters:
    ///   - logger: The logger to wrap; its level and metadata are kept.
    ///   - secrets: The secret values to replace, collected before redaction.
    /// - Returns: A logger writing through `logger`'s handler.
    public func scrubbing(_ logger: Logger, secrets: Secrets) -> Logger {
        var scrubbed = logger
        scrubbed.handler = ScrubbingLogHandler(base: logger.handler, redactor: self, secrets: secrets)
        return scrubbed
    }

    /// The logger a transport gets: ``scrubbing(_:secrets:)``, without its HTTP library's `trace` events. At `trace`,
    /// AsyncHTTPClient logs every response part as it is: each header (a session cookie under any name, a token in
    /// a header the redactor does not know) and the body's bytes, secrets that are not the request's and cannot be
    /// scrubbed. Courier's own log lines, redacted, still show the heads.
    func scrubbingForTransport(_ logger: Logger, secrets: Secrets) -> Logger {
        var scrubbed = logger
        var handler = ScrubbingLogHandler(base: logger.handler, redactor: self, secrets: secrets)
        handler.floor = .debug
        scrubbed.handler = handler
        return scrubbed
    }
}
