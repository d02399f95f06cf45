import ArgumentParser
import WorkoutStore

#if canImport(Glibc)
    import Glibc
#endif

/// The `hrbridge` command line: thin commands over the modules.
@main
struct HRBridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrbridge",
        abstract: "Bluetooth LE heart-rate straps and fitness sensors as a workout platform for Linux.",
        subcommands: [
            DecodeCommand.self, WorkoutCommand.self, ScanCommand.self, DevicesCommand.self, PairCommand.self,
            ForgetCommand.self, MonitorCommand.self, RelayCommand.self, DoctorCommand.self, WorkoutsCommand.self,
            SamplesCommand.self,
            PlanCommand.self, SessionCommand.self, HRVCommand.self,
        ]
    )

    /// ArgumentParser's entry point, with one addition: a store error that reaches the top (a
    /// corrupt file, a row of the wrong type, a full disk) is one line and exit status 73, as the
    /// commands' own store errors are.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as StoreError {
            StandardError.write("hrbridge: \(error)")
            Glibc.exit(73)
        } catch {
            exit(withError: error)
        }
    }
}
