import ArgumentParser

/// The `hrbridge` command line: thin commands over the modules.
@main
struct HRBridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrbridge",
        abstract: "Bluetooth LE heart-rate straps and fitness sensors as a workout platform for Linux.",
        subcommands: [
            DecodeCommand.self, WorkoutCommand.self, ScanCommand.self, DevicesCommand.self, PairCommand.self,
            ForgetCommand.self, MonitorCommand.self, DoctorCommand.self, WorkoutsCommand.self, SamplesCommand.self,
            PlanCommand.self, DaemonCommand.self, SessionCommand.self,
        ]
    )
}
