#if TestServer
    import NIOCore
    import NIOHTTP1

    /// Serves the routes unchanged on an HTTP/2 stream: turns the raw HTTP/1.1 bytes they write into response parts.
    ///
    /// The routes write responses as raw bytes (see ``Connection``), so that fault routes can break HTTP/1.1 framing.
    /// On an HTTP/2 stream, `HTTP2FramePayloadToHTTP1ServerCodec` decodes the request into the same
    /// `HTTPServerRequestPart`s but wants `HTTPServerResponsePart`s back, which it encodes as HEADERS and DATA
    /// frames. This handler sits between the two and runs ``HTTP1ResponseParser`` on what the routes write. HTTP/1.1
    /// connection headers (`Connection`, `Transfer-Encoding`, …) are dropped by the codec's header normalisation.
    ///
    /// What a fault route becomes on HTTP/2:
    /// - framing HTTP/1.1 forbids (conflicting lengths, a bad chunk size) resets the stream (`RST_STREAM`), and the
    ///   write fails, which ends the route;
    /// - a body shorter than its `Content-Length`, or a chunked body without its last chunk, followed by a close or
    ///   a reset: the stream is reset after the bytes sent;
    /// - bytes after a complete response (`extra-response`) are dropped: HTTP/2 has no way to send them;
    /// - a body with no framing at all ends (`END_STREAM`) when the route closes.
    ///
    /// It also watches the request head, because a `HEAD` response has no body whatever its headers say.
    final class HTTP2ResponseTranslator: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = ByteBuffer
        typealias OutboundOut = HTTPServerResponsePart

        private var parser = HTTP1ResponseParser()

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head(let head) = unwrapInboundIn(data) {
                parser.isHeadRequest = head.method == .HEAD
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let parts: [HTTPServerResponsePart]
            do {
                parts = try parser.parse(unwrapOutboundIn(data))
            } catch {
                promise?.fail(error)
                // Closing a stream channel before its end resets the stream.
                context.close(promise: nil)
                return
            }
            guard let last = parts.last else {
                // Only part of a head so far: nothing to send yet, and nothing to wait for.
                promise?.succeed()
                return
            }
            for part in parts.dropLast() {
                context.write(wrapOutboundOut(part), promise: nil)
            }
            context.write(wrapOutboundOut(last), promise: promise)
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            if let end = parser.finish() {
                context.writeAndFlush(wrapOutboundOut(end), promise: nil)
            }
            context.close(mode: mode, promise: promise)
        }
    }
#endif
