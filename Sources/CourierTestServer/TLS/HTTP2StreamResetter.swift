#if TestServer
    import NIOCore
    import NIOHTTP2

    /// Resets an HTTP/2 stream with a chosen error code, for the `reset-stream` fault route.
    ///
    /// Sits first in a stream's pipeline, below `HTTP2FramePayloadToHTTP1ServerCodec`, which only takes HTTP/1-style
    /// parts. A route asks for the reset with the outbound user event ``Reset`` (see
    /// ``Connection/resetStream(_:)``); the handler writes a `RST_STREAM` frame with the event's code, which closes
    /// the stream and leaves the connection open. Closing the stream channel instead would always send `CANCEL`.
    final class HTTP2StreamResetter: ChannelOutboundHandler, RemovableChannelHandler {
        typealias OutboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        /// The request to reset the stream with `code`.
        struct Reset: Sendable {
            let code: HTTP2ErrorCode
        }

        func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
            guard let reset = event as? Reset else {
                context.triggerUserOutboundEvent(event, promise: promise)
                return
            }
            context.writeAndFlush(wrapOutboundOut(.rstStream(reset.code)), promise: promise)
        }
    }
#endif
