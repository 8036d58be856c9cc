import Courier
import CourierURLSession

/// The URLSession transport (kept in its own file so the main flow reads transport-agnostic).
func makeURLSessionTransport() -> any Transport {
    URLSessionTransport()
}
