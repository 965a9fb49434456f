"""Every SQL statement the service runs outside migrations, one module per table or aggregate.

Stages, services and routes orchestrate; they call the named functions here and own the
transaction (a function takes a connection and never commits)."""
