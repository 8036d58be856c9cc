import AppClient
import Courier
import CourierTesting
import CourierURLSession
import Testing

@Suite("An app's view model on Courier with the server traits off")
@MainActor
struct UserViewModelTests {
    @Test("a user loads, and the view model says so")
    func loads() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/42", with: .json(raw: #"{"id": 42, "name": "Ada"}"#))
        let model = UserViewModel(client: Client(server: Server(baseURL: Config.api), transport: mock))
        await model.load(id: 42)
        #expect(model.state == .loaded(User(id: 42, name: "Ada")))
    }

    @Test("a failure becomes a sentence for the person holding the phone, not an error code")
    func fails() async throws {
        let mock = MockTransport()
        mock.stub(.get, "/users/42", with: .status(503))
        let model = UserViewModel(client: Client(server: Server(baseURL: Config.api), transport: mock))
        await model.load(id: 42)
        guard case .failed(let sentence) = model.state else {
            Issue.record("expected a failure, got \(model.state)")
            return
        }
        #expect(!sentence.isEmpty)
        #expect(!sentence.contains("503") && !sentence.contains("unacceptableStatus"), "\(sentence)")
    }

    @Test("with the server traits off, nothing of the server stack is built; on Apple, URLSession is the default")
    func noServerStack() {
        #if canImport(AsyncHTTPClient) || canImport(NIOCore) || canImport(NIOSSL) || canImport(Crypto)
            Issue.record("AsyncHTTPClient, SwiftNIO or swift-crypto was built for an app that turned the traits off")
        #endif
        #if canImport(Darwin)
            #expect(Client.defaultTransport is URLSessionTransport)
        #endif
    }
}
