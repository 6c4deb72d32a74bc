package index

// The names the manager is known by on the API server. Each has this one home: the manager,
// the chart (hack/chartgen generates its helper almanac.leaseName from LeaderElectionID),
// the commands and the tests read them here.

// FieldManager is the field manager of every write almanac makes: the HPAs' server-side
// apply, the status patches of its objects, and the CA bundle it injects into its webhook
// configurations. The cache keeps its managedFields entries of HPAs, and no other.
const FieldManager = "almanac"

// LeaderElectionID is the name of the manager's leader-election Lease, in the namespace it
// runs in (the chart creates it empty, so that it belongs to the release, and grants the
// manager get, update and patch on it by name), and the label name="…" of client-go's
// leader_election_master_status metric that the chart's alert and dashboard select.
const LeaderElectionID = "almanac.almanac.dev"
