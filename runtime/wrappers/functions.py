"""The one list of MPI functions mpiscope wraps, and the roles of their arguments.

Each line of LIST (IPM's key-file style) is

    kind [flags] | C prototype (as mpi.h declares it) | roles

kind is the group a function is reported in (META ``function_kinds``):
p2p, wait ("Wait and Probe" time: the calls that block waiting for another
rank's message or request -- blocking receives, the Wait/Test families,
probes), coll, rma, io, comm, other. The kind never changes what is counted
for a function's bytes and peers; those come from its roles. Every ``coll``
function X also gets an ``X:sync`` entry of kind ``sync`` for the
MPISCOPE_SYNC barrier time.

roles say what the runtime does with the arguments. A role is
``name(arg, ...)`` or ``name@qualifier(arg, ...)``; each arg names an argument
of the prototype (or is an integer literal). ROLES below documents every role
and says whether it acts before ("pre"), after ("post") or both around the
PMPI call; the C side of a role is the macro MPISCOPE_PRE_<name> and/or
MPISCOPE_POST_<name> in runtime/wrappers/roles.h, and a qualifier q makes it
conditional on MPISCOPE_QUAL_<q>. ``hand`` marks a
function whose wrapper is written by hand (runtime/lifecycle.c).

RATIONALE: the roles live here, not in the generator (mpiP keeps them in 14
tables inside its generator, keyed by argument name, so renaming an argument
silently loses a byte count). tests/runtime/wrappers/test_runtime_generator.py checks that every
role names real arguments and that every entry yields a wrapper.

MPI-4.0 (wrapped where the MPI built against declares it). Flags after the
kind derive MPI-4 entries from a line instead of repeating it:

    _c     the large-count MPI_X_c: the same roles, the prototype with every
           count (an int argument named *count) an MPI_Count, every count
           array (*counts[]) const MPI_Count [], every displacement array
           (*displs[]) const MPI_Aint [] and disp_unit an MPI_Aint, as MPI-4.0
           defines them; the roles read the counts alike (roles.h sums either
           width of count array).
    _init  the persistent collective MPI_X_init: the prototype plus
           ``MPI_Info info, MPI_Request *request``, the roles of X without
           sync (it does not block) and with persist(request), so the bytes
           X would move are counted at each MPI_Start of the request, as for
           MPI_Send_init. With _c too, MPI_X_init_c as well.
    mpi4   the line itself is an MPI-4.0 function (MPI_Isendrecv,
           MPI_Psend_init...).

RATIONALE: a derivation, not a second line per variant: the 123 _c and 22
_init entries would otherwise repeat 145 prototypes whose roles must stay
equal to their base's, and the rule above is the standard's own (MPI-4.0's
large-count bindings and persistent collective operations); a wrong
derivation cannot pass unnoticed, because the generated definition must
match the prototype mpi.h declares or the build fails (and
tests/runtime/counting/test_runtime_mpi4.py compares them with MPICH's mpi.h).
MPI-4 entries (derived or flagged mpi4) are generated only when the MPI's
mpi.h declares them: load(declared=...) keeps those whose names are in the
set gen_wrappers.py finds by preprocessing mpi.h with the MPI's compiler
(Open MPI 4.1 declares none, MPICH 4.0.2 all). load() without it returns
the whole list (the tests' and exports_diff.py's view).

This module is imported by runtime/wrappers/gen_wrappers.py (C wrappers) and
runtime/fortran/gen_fortran.py (Fortran-symbol wrappers, with the same
detection and no _c, docs/fortran.md); load() is the API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("p2p", "wait", "coll", "sync", "rma", "io", "comm", "other")

# role -> (phase, meaning). Bytes follow the rule "a call's bytes are the
# size of the buffers its arguments describe" (docs/runtime.md).
ROLES = {
    "send": ("pre", "bytes_sent += count x type size"),
    "recv": ("pre", "bytes_recv += count x type size (the posted size)"),
    "recv_req": ("post", "a posted receive request: remember its size and where it was recorded, so that a successful MPI_Cancel of it takes the bytes back (cancels.c)"),
    "cancel": ("post", "MPI_Cancel of a counted receive: watch its completion"),
    "done": ("both", "completion of one request (MPI_Wait): a pending cancelled receive whose status says cancelled moved nothing"),
    "done_flag": ("both", "done, if *flag (MPI_Test)"),
    "done_v": ("both", "done for a request passed by value, if *flag (MPI_Request_get_status)"),
    "done_all": ("both", "done for every request of the array (MPI_Waitall; MPI_Testall if *flag; flag 0: none)"),
    "done_any": ("both", "done for the request at *index (MPI_Waitany; MPI_Testany if *flag)"),
    "done_some": ("both", "done for the requests listed in indices[0..*outcount) (MPI_Waitsome, MPI_Testsome)"),
    "send_n": ("pre", "bytes_sent += count x type size x group size (remote group of an intercommunicator)"),
    "recv_n": ("pre", "bytes_recv += count x type size x group size (remote group of an intercommunicator)"),
    "send_v": ("pre", "bytes_sent += sum(counts over the group) x type size"),
    "recv_v": ("pre", "bytes_recv += sum(counts over the group) x type size"),
    "send_w": ("pre", "bytes_sent += sum(counts[i] x size(types[i])) over the group"),
    "recv_w": ("pre", "bytes_recv += sum(counts[i] x size(types[i])) over the group"),
    "send_sum": ("pre", "bytes_sent += sum(counts over the local group) x type size"),
    "recv_mine": ("pre", "bytes_recv += counts[my rank] x type size"),
    "send_out": ("pre", "bytes_sent += count x type size x topology out-degree (neighbours that are not MPI_PROC_NULL)"),
    "recv_in": ("pre", "bytes_recv += count x type size x topology in-degree (neighbours that are not MPI_PROC_NULL)"),
    "send_outv": ("pre", "bytes_sent += sum(counts over out-neighbours that are not MPI_PROC_NULL) x type size"),
    "recv_inv": ("pre", "bytes_recv += sum(counts over in-neighbours that are not MPI_PROC_NULL) x type size"),
    "send_outw": ("pre", "bytes_sent += sum(counts[i] x size(types[i])) over out-neighbours"),
    "recv_inw": ("pre", "bytes_recv += sum(counts[i] x size(types[i])) over in-neighbours"),
    "inplace": ("pre", "the send buffer is MPI_IN_PLACE: 0 bytes sent, and the send arguments (maybe garbage) are not read; list it before the send roles"),
    "inplace_recv": ("pre", "the receive buffer is MPI_IN_PLACE: 0 bytes received, receive arguments not read; list it before the recv roles"),
    "root": ("pre", "decide root / leaf / member / not involved from (root, comm) for the qualifiers"),
    "dest": ("pre", "point-to-point message to (dest, comm): counted per world-rank peer; MPI_PROC_NULL moves 0 bytes"),
    "source": ("pre", "a receive from MPI_PROC_NULL moves 0 bytes"),
    "from": ("pre", "the world rank a blocking receive or probe waits for (source, comm): what a snapshot shows the rank waiting on"),
    "message": ("pre", "a receive of MPI_MESSAGE_NO_PROC moves 0 bytes"),
    "recv_status": ("both", "bytes_recv = the bytes the status says arrived or were read (MPI_Get_elements_x with MPI_BYTE; the runtime's own status if ignored)"),
    "send_p": ("pre", "bytes_sent += partitions x count x type size (a partitioned send)"),
    "recv_p": ("pre", "bytes_recv += partitions x count x type size (a partitioned receive)"),
    "persist": ("post", "a persistent request was made (MPI_Send_init, MPI_Psend_init, MPI_Allreduce_init...): "
                "the bytes and peer the roles before it computed move to the request, so the _init call "
                "counts none and each MPI_Start of the request counts them (comms.c)"),
    "start": ("post", "a start of a persistent request: its bytes (and, for a send, its message to the peer)"),
    "startall": ("post", "start for each of count requests"),
    "free_request": ("pre", "forget a persistent request"),
    "free_type": ("post", "a datatype handle died: forget the cached type sizes (after the free, so no thread can cache the dead type's size again)"),
    "free_comm": ("pre", "forget the communicator's cached rank translation (its handle may be reused)"),
    "file_open": ("post", "remember the MPI-IO hints of a file opened collectively (META io_files)"),
    "comm_of": ("pre", "per-communicator table: the call is counted under this communicator; added by load() to every function with an MPI_Comm argument (its first)"),
    "comm_new": ("post", "a communicator was made from parent: name it '<how> of <parent>' (how: an integer literal, enum mpiscope_comm_kind in mpiscope.h)"),
    "comm_split": ("post", "a communicator made by MPI_Comm_split: 'split(color C) of <parent>'"),
    "comm_split_type": ("post", "made by MPI_Comm_split_type: 'split_type(shared) of <parent>'"),
    "comm_create_group": ("post", "made by MPI_Comm_create_group (collective over the group only: its id hashes the members)"),
    "comm_cart": ("post", "made by MPI_Cart_create: 'cart 4x4 of <parent>'"),
    "comm_name": ("post", "MPI_Comm_set_name: the communicator's name in the per-communicator table"),
    "sync": ("pre", "MPISCOPE_SYNC=1: time a PMPI_Barrier(comm) first, as <function>:sync (blocking collectives only)"),
}

# Qualifiers of roles on rooted collectives (set by the root role).
QUALIFIERS = {
    "root": "the root (MPI_ROOT on an intercommunicator)",
    "leaf": "a rank that takes part and is not the root",
    "member": "a leaf, or the root of an intracommunicator (a rank that owns a block of data)",
}

LIST = r"""
p2p _c | int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | send(count,datatype) dest(dest,comm)
p2p _c | int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | send(count,datatype) dest(dest,comm)
p2p _c | int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | send(count,datatype) dest(dest,comm)
p2p _c | int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) | send(count,datatype) dest(dest,comm)
wait _c | int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) | recv_status(datatype,status) from(source,comm)
wait _c | int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status) | send(sendcount,sendtype) dest(dest,comm) recv_status(recvtype,status) from(source,comm)
wait _c | int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status) | send(count,datatype) dest(dest,comm) recv_status(datatype,status) from(source,comm)
p2p _c | int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm)
p2p _c | int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm)
p2p _c | int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm)
p2p _c | int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm)
p2p _c | int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) | recv(count,datatype) source(source) recv_req(request)
p2p _c | int MPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm) persist(request)
p2p _c | int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm) persist(request)
p2p _c | int MPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm) persist(request)
p2p _c | int MPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm) persist(request)
p2p _c | int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) | recv(count,datatype) source(source) persist(request)
p2p mpi4 _c | int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request) | send(sendcount,sendtype) dest(dest,comm) recv(recvcount,recvtype) source(source)
p2p mpi4 _c | int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request) | send(count,datatype) dest(dest,comm) recv(count,datatype) source(source)
p2p mpi4 | int MPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request) | send_p(partitions,count,datatype) dest(dest,comm) persist(request)
p2p mpi4 | int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request) | recv_p(partitions,count,datatype) source(source) persist(request)
p2p mpi4 | int MPI_Pready(int partition, MPI_Request request) |
p2p mpi4 | int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request) |
p2p mpi4 | int MPI_Pready_list(int length, int array_of_partitions[], MPI_Request request) |
wait mpi4 | int MPI_Parrived(MPI_Request request, int partition, int *flag) |
p2p   | int MPI_Start(MPI_Request *request) | start(request)
p2p   | int MPI_Startall(int count, MPI_Request array_of_requests[]) | startall(count,array_of_requests)
wait _c | int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status) | recv_status(datatype,status)
p2p _c | int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request) | recv(count,datatype) message(message) recv_req(request)
wait  | int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) | from(source,comm)
wait  | int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) |
wait  | int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) | from(source,comm)
wait  | int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) |
wait  | int MPI_Wait(MPI_Request *request, MPI_Status *status) | done(request,status)
wait  | int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) | done_all(count,array_of_requests,0,array_of_statuses)
wait  | int MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status) | done_any(count,array_of_requests,indx,0,status)
wait  | int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]) | done_some(incount,array_of_requests,outcount,array_of_indices,array_of_statuses)
wait  | int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) | done_flag(flag,request,status)
wait  | int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]) | done_all(count,array_of_requests,flag,array_of_statuses)
wait  | int MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status) | done_any(count,array_of_requests,indx,flag,status)
wait  | int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status array_of_statuses[]) | done_some(incount,array_of_requests,outcount,array_of_indices,array_of_statuses)
wait  | int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) | done_v(flag,request,status)
other | int MPI_Request_free(MPI_Request *request) | free_request(request)
other | int MPI_Cancel(MPI_Request *request) | cancel(request)
coll _init | int MPI_Barrier(MPI_Comm comm) | sync(comm)
coll _c _init | int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) | root(root,comm) send@root(count,datatype) recv@leaf(count,datatype) sync(comm)
coll _c _init | int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) | root(root,comm) inplace(sendbuf) send@member(sendcount,sendtype) recv_n@root(recvcount,recvtype,comm) sync(comm)
coll _c _init | int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) | root(root,comm) inplace(sendbuf) send@member(sendcount,sendtype) recv_v@root(recvcounts,recvtype,comm) sync(comm)
coll _c _init | int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) | root(root,comm) inplace_recv(recvbuf) send_n@root(sendcount,sendtype,comm) recv@member(recvcount,recvtype) sync(comm)
coll _c _init | int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) | root(root,comm) inplace_recv(recvbuf) send_v@root(sendcounts,sendtype,comm) recv@member(recvcount,recvtype) sync(comm)
coll _c _init | int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) | inplace(sendbuf) send(sendcount,sendtype) recv_n(recvcount,recvtype,comm) sync(comm)
coll _c _init | int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) | inplace(sendbuf) send(sendcount,sendtype) recv_v(recvcounts,recvtype,comm) sync(comm)
coll _c _init | int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) | inplace(sendbuf) send_n(sendcount,sendtype,comm) recv_n(recvcount,recvtype,comm) sync(comm)
coll _c _init | int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) | inplace(sendbuf) send_v(sendcounts,sendtype,comm) recv_v(recvcounts,recvtype,comm) sync(comm)
coll _c _init | int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) | inplace(sendbuf) send_w(sendcounts,sendtypes,comm) recv_w(recvcounts,recvtypes,comm) sync(comm)
coll _c _init | int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) | root(root,comm) inplace(sendbuf) send@member(count,datatype) recv@root(count,datatype) sync(comm)
coll _c _init | int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) | inplace(sendbuf) send(count,datatype) recv(count,datatype) sync(comm)
coll _c _init | int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) | inplace(sendbuf) send_sum(recvcounts,datatype,comm) recv_mine(recvcounts,datatype,comm) sync(comm)
coll _c _init | int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) | inplace(sendbuf) send_n(recvcount,datatype,comm) recv(recvcount,datatype) sync(comm)
coll _c _init | int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) | inplace(sendbuf) send(count,datatype) recv(count,datatype) sync(comm)
coll _c _init | int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) | inplace(sendbuf) send(count,datatype) recv(count,datatype) sync(comm)
coll  | int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
coll _c | int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request) | root(root,comm) send@root(count,datatype) recv@leaf(count,datatype)
coll _c | int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) | root(root,comm) inplace(sendbuf) send@member(sendcount,sendtype) recv_n@root(recvcount,recvtype,comm)
coll _c | int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) | root(root,comm) inplace(sendbuf) send@member(sendcount,sendtype) recv_v@root(recvcounts,recvtype,comm)
coll _c | int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) | root(root,comm) inplace_recv(recvbuf) send_n@root(sendcount,sendtype,comm) recv@member(recvcount,recvtype)
coll _c | int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) | root(root,comm) inplace_recv(recvbuf) send_v@root(sendcounts,sendtype,comm) recv@member(recvcount,recvtype)
coll _c | int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send(sendcount,sendtype) recv_n(recvcount,recvtype,comm)
coll _c | int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send(sendcount,sendtype) recv_v(recvcounts,recvtype,comm)
coll _c | int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send_n(sendcount,sendtype,comm) recv_n(recvcount,recvtype,comm)
coll _c | int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send_v(sendcounts,sendtype,comm) recv_v(recvcounts,recvtype,comm)
coll _c | int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send_w(sendcounts,sendtypes,comm) recv_w(recvcounts,recvtypes,comm)
coll _c | int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request) | root(root,comm) inplace(sendbuf) send@member(count,datatype) recv@root(count,datatype)
coll _c | int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send(count,datatype) recv(count,datatype)
coll _c | int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send_sum(recvcounts,datatype,comm) recv_mine(recvcounts,datatype,comm)
coll _c | int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send_n(recvcount,datatype,comm) recv(recvcount,datatype)
coll _c | int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send(count,datatype) recv(count,datatype)
coll _c | int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) | inplace(sendbuf) send(count,datatype) recv(count,datatype)
coll _c _init | int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) | send(sendcount,sendtype) recv_in(recvcount,recvtype,comm) sync(comm)
coll _c _init | int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) | send(sendcount,sendtype) recv_inv(recvcounts,recvtype,comm) sync(comm)
coll _c _init | int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) | send_out(sendcount,sendtype,comm) recv_in(recvcount,recvtype,comm) sync(comm)
coll _c _init | int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) | send_outv(sendcounts,sendtype,comm) recv_inv(recvcounts,recvtype,comm) sync(comm)
coll _c _init | int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) | send_outw(sendcounts,sendtypes,comm) recv_inw(recvcounts,recvtypes,comm) sync(comm)
coll _c | int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | send(sendcount,sendtype) recv_in(recvcount,recvtype,comm)
coll _c | int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | send(sendcount,sendtype) recv_inv(recvcounts,recvtype,comm)
coll _c | int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | send_out(sendcount,sendtype,comm) recv_in(recvcount,recvtype,comm)
coll _c | int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) | send_outv(sendcounts,sendtype,comm) recv_inv(recvcounts,recvtype,comm)
coll _c | int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request) | send_outw(sendcounts,sendtypes,comm) recv_inw(recvcounts,recvtypes,comm)
rma _c | int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) | send(origin_count,origin_datatype)
rma _c | int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) | recv(origin_count,origin_datatype)
rma _c | int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) | send(origin_count,origin_datatype)
rma _c | int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) | send(origin_count,origin_datatype) recv(result_count,result_datatype)
rma   | int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) | send(1,datatype) recv(1,datatype)
rma   | int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) | send(1,datatype) recv(1,datatype)
rma _c | int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) | send(origin_count,origin_datatype)
rma _c | int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request) | recv(origin_count,origin_datatype)
rma _c | int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) | send(origin_count,origin_datatype)
rma _c | int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request) | send(origin_count,origin_datatype) recv(result_count,result_datatype)
rma _c | int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) |
rma _c | int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) |
rma _c | int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) |
rma   | int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) |
rma   | int MPI_Win_free(MPI_Win *win) |
rma   | int MPI_Win_fence(int assert, MPI_Win win) |
rma   | int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) |
rma   | int MPI_Win_unlock(int rank, MPI_Win win) |
rma   | int MPI_Win_lock_all(int assert, MPI_Win win) |
rma   | int MPI_Win_unlock_all(MPI_Win win) |
rma   | int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) |
rma   | int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) |
rma   | int MPI_Win_complete(MPI_Win win) |
rma   | int MPI_Win_wait(MPI_Win win) |
rma   | int MPI_Win_test(MPI_Win win, int *flag) |
rma   | int MPI_Win_flush(int rank, MPI_Win win) |
rma   | int MPI_Win_flush_all(MPI_Win win) |
rma   | int MPI_Win_flush_local(int rank, MPI_Win win) |
rma   | int MPI_Win_flush_local_all(MPI_Win win) |
rma   | int MPI_Win_sync(MPI_Win win) |
rma   | int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) |
rma   | int MPI_Win_detach(MPI_Win win, const void *base) |
io    | int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) | file_open(comm,filename,fh)
io    | int MPI_File_close(MPI_File *fh) |
io    | int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info) |
io    | int MPI_File_sync(MPI_File fh) |
io    | int MPI_File_delete(const char *filename, MPI_Info info) |
io    | int MPI_File_set_size(MPI_File fh, MPI_Offset size) |
io    | int MPI_File_preallocate(MPI_File fh, MPI_Offset size) |
io    | int MPI_File_get_size(MPI_File fh, MPI_Offset *size) |
io    | int MPI_File_set_info(MPI_File fh, MPI_Info info) |
io    | int MPI_File_set_atomicity(MPI_File fh, int flag) |
io    | int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) |
io    | int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) |
io    | int MPI_File_get_position(MPI_File fh, MPI_Offset *offset) |
io    | int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset) |
io _c | int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | recv_status(datatype,status)
io _c | int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | recv_status(datatype,status)
io _c | int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | recv_status(datatype,status)
io _c | int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | recv_status(datatype,status)
io _c | int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | recv_status(datatype,status)
io _c | int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | recv_status(datatype,status)
io _c | int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | send(count,datatype)
io _c | int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | send(count,datatype)
io _c | int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | send(count,datatype)
io _c | int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | send(count,datatype)
io _c | int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | send(count,datatype)
io _c | int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) | send(count,datatype)
io _c | int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | recv(count,datatype)
io _c | int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | recv(count,datatype)
io _c | int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | recv(count,datatype)
io _c | int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | recv(count,datatype)
io _c | int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | recv(count,datatype)
io _c | int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | send(count,datatype)
io _c | int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | send(count,datatype)
io _c | int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | send(count,datatype)
io _c | int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | send(count,datatype)
io _c | int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) | send(count,datatype)
io _c | int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) | recv(count,datatype)
io    | int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status) |
io _c | int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) | send(count,datatype)
io    | int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status) |
io _c | int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype) | recv(count,datatype)
io    | int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) |
io _c | int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype) | send(count,datatype)
io    | int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) |
io _c | int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) | recv(count,datatype)
io    | int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status) |
io _c | int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) | send(count,datatype)
io    | int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status) |
comm  | int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) | comm_split(comm,color,newcomm)
comm  | int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) | comm_split_type(comm,split_type,newcomm)
comm  | int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) | comm_new(comm,newcomm,1)
comm  | int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) | comm_new(comm,newcomm,1)
comm  | int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) | comm_new(comm,newcomm,12)
comm mpi4 | int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request) | comm_new(comm,newcomm,12)
comm  | int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) | comm_new(comm,newcomm,4)
comm  | int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) | comm_create_group(comm,tag,newcomm)
comm  | int MPI_Comm_free(MPI_Comm *comm) | free_comm(comm)
comm  | int MPI_Comm_disconnect(MPI_Comm *comm) | free_comm(comm)
comm  | int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm *newintercomm) | comm_new(local_comm,newintercomm,6)
comm  | int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) | comm_new(intercomm,newintracomm,7)
comm  | int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]) |
comm  | int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]) |
comm  | int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) |
comm  | int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) |
comm  | int MPI_Comm_join(int fd, MPI_Comm *intercomm) |
comm  | int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart) | comm_cart(comm_old,ndims,dims,comm_cart)
comm  | int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) | comm_new(comm,newcomm,9)
comm  | int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder, MPI_Comm *comm_graph) | comm_new(comm_old,comm_graph,10)
comm  | int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[], const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph) | comm_new(comm_old,comm_dist_graph,11)
comm  | int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph) | comm_new(comm_old,comm_dist_graph,11)
comm  | int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name) | comm_name(comm,comm_name)
comm  | int MPI_Comm_group(MPI_Comm comm, MPI_Group *group) |
comm  | int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group) |
comm  | int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) |
comm  | int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) |
comm  | int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) |
comm  | int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) |
comm  | int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) |
comm  | int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) |
comm  | int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) |
comm  | int MPI_Group_free(MPI_Group *group) |
other | int MPI_Type_free(MPI_Datatype *datatype) | free_type(datatype)
other | int MPI_Comm_rank(MPI_Comm comm, int *rank) |
other | int MPI_Comm_size(MPI_Comm comm, int *size) |
other | int MPI_Init(int *argc, char ***argv) | hand
other | int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) | hand
other | int MPI_Finalize(void) | hand
other | int MPI_Abort(MPI_Comm comm, int errorcode) | hand
other | int MPI_Pcontrol(const int level, ...) | hand
"""


@dataclass(frozen=True)
class Arg:
    type: str       # C type as written, array brackets included: "const int []"
    name: str


@dataclass(frozen=True)
class Role:
    name: str
    qualifier: str  # "" or a QUALIFIERS key
    args: tuple[str, ...]


@dataclass(frozen=True)
class Function:
    name: str                   # "MPI_Send"
    kind: str                   # one of KINDS
    prototype: str              # "int MPI_Send(const void *buf, ...)"
    args: tuple[Arg, ...]
    roles: tuple[Role, ...]
    hand: bool                  # wrapper written by hand (lifecycle.c)
    mpi4: bool = False          # MPI-4.0: generated only where mpi.h declares it
    base: str = ""              # the line an _c / _init entry is derived from

    def role(self, name: str) -> Role | None:
        return next((r for r in self.roles if r.name == name), None)

    @property
    def moves_data(self) -> bool:
        """True if the function's calls go into the message-size histogram."""
        data = {"send", "recv", "recv_status", "start", "startall"}
        if self.role("persist"):          # its bytes move at each MPI_Start
            return False
        return any(r.name in data or r.name.startswith(("send_", "recv_")) for r in self.roles)


_PROTO = re.compile(r"int\s+(MPI_\w+)\s*\((.*)\)\s*$")
_ARG = re.compile(r"(.*?)(\w+)\s*((?:\[\s*\w*\s*\])*)$")
_ROLE = re.compile(r"(\w+)(?:@(\w+))?\(([^)]*)\)$")


def parse_args(body: str) -> tuple[Arg, ...]:
    body = body.strip()
    if body in ("", "void"):
        return ()
    out = []
    for part in body.split(","):
        part = part.strip()
        if part == "...":
            out.append(Arg("...", "..."))
            continue
        m = _ARG.match(part)
        if not m:
            raise ValueError(f"cannot parse argument {part!r}")
        ctype = " ".join(m.group(1).split())
        if m.group(3):
            ctype += " " + "".join(re.sub(r"\s", "", d) for d in re.findall(r"\[[^\]]*\]", m.group(3)))
        out.append(Arg(ctype, m.group(2)))
    return tuple(out)


def parse_roles(text: str) -> tuple[tuple[Role, ...], bool]:
    roles, hand = [], False
    for tok in text.split():
        if tok == "hand":
            hand = True
            continue
        m = _ROLE.match(tok)
        if not m:
            raise ValueError(f"cannot parse role {tok!r}")
        args = tuple(a.strip() for a in m.group(3).split(",") if a.strip())
        roles.append(Role(m.group(1), m.group(2) or "", args))
    return tuple(roles), hand


FLAGS = ("_c", "_init", "mpi4")


def parse_line(line: str) -> list[Function]:
    """The entry of one line, then the entries its flags derive."""
    parts = [x.strip() for x in line.split("|")]
    if len(parts) == 2:          # a function without roles may omit the last column
        parts.append("")
    if len(parts) != 3:
        raise ValueError(f"not 'kind | prototype | roles': {line!r}")
    head, proto, roles = parts
    kind, *flags = head.split()
    m = _PROTO.match(proto)
    if not m:
        raise ValueError(f"not an MPI prototype: {proto!r}")
    if kind not in KINDS:
        raise ValueError(f"{m.group(1)}: unknown kind {kind!r}")
    bad = [f for f in flags if f not in FLAGS]
    if bad:
        raise ValueError(f"{m.group(1)}: unknown flag {bad[0]!r} (known: {', '.join(FLAGS)})")
    role_list, hand = parse_roles(roles)
    base = _entry(m.group(1), kind, parse_args(m.group(2)), role_list, hand, "mpi4" in flags, "",
                  proto)
    out = [base]
    for entry in [base, *([_init_of(base)] if "_init" in flags else [])]:
        if entry is not base:
            out.append(entry)
        if "_c" in flags:
            out.append(_large_count_of(entry))
    return out


def _entry(name, kind, args, roles, hand, mpi4, base, proto="") -> Function:
    # per-communicator tables: every call with a communicator is counted under it
    comm = next((a.name for a in args if a.type == "MPI_Comm"), None)
    if comm and not hand and not any(r.name == "comm_of" for r in roles):
        roles = (Role("comm_of", "", (comm,)), *roles)
    return Function(name, kind, proto or _render(name, args), args, tuple(roles), hand, mpi4, base)


def _render(name: str, args: tuple[Arg, ...]) -> str:
    """The C prototype of name(args), arrays written after the argument name."""
    def one(a: Arg) -> str:
        if a.type == "...":
            return "..."
        if "[" in a.type:
            i = a.type.index("[")
            return f"{a.type[:i].rstrip()} {a.name}{a.type[i:]}"
        return f"{a.type}{a.name}" if a.type.endswith("*") else f"{a.type} {a.name}"
    return f"int {name}({', '.join(map(one, args)) or 'void'})"


def _large_count_of(f: Function) -> Function:
    """MPI_X_c: counts MPI_Count, count arrays MPI_Count[], displacements MPI_Aint (MPI-4.0 2.5.8)."""
    def widen(a: Arg) -> Arg:
        if a.type == "int" and (a.name.endswith("count") or a.name == "disp_unit"):
            return Arg("MPI_Aint" if a.name == "disp_unit" else "MPI_Count", a.name)
        if a.type == "const int []" and a.name.endswith("counts"):
            return Arg("const MPI_Count []", a.name)
        if a.type == "const int []" and a.name.endswith("displs"):
            return Arg("const MPI_Aint []", a.name)
        return a
    return _entry(f.name + "_c", f.kind, tuple(map(widen, f.args)), f.roles, False, True,
                  f.base or f.name)


def _init_of(f: Function) -> Function:
    """MPI_X_init: X's arguments plus info and request; X's roles minus sync, plus persist."""
    args = (*f.args, Arg("MPI_Info", "info"), Arg("MPI_Request *", "request"))
    roles = tuple(r for r in f.roles if r.name != "sync") + (Role("persist", "", ("request",)),)
    return _entry(f.name + "_init", f.kind, args, roles, False, True, f.name)


def declared_in(text: str) -> set[str]:
    """The MPI_ functions a (preprocessed) mpi.h declares with their PMPI_ twin
    (a wrapper needs both: mpiscope_next.h types its pointer from PMPI_X)."""
    names = set(re.findall(r"\bint\s+(P?MPI_\w+)\s*\(", text))
    return {n for n in names if n.startswith("MPI_") and "P" + n in names}


def load(text: str = LIST, declared: set[str] | None = None) -> list[Function]:
    """Every wrapped function, in list order (which is also function-id order).

    declared: the functions mpi.h declares; MPI-4 entries it lacks are left
    out. None: every entry (the whole list)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out += [f for f in parse_line(line)
                    if declared is None or not f.mpi4 or f.name in declared]
    names = [f.name for f in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"listed twice: {sorted(dup)}")
    return out


def table(functions: list[Function]) -> list[tuple[str, str]]:
    """(name, kind) of every function id: the list, then X:sync for each collective X."""
    rows = [(f.name, f.kind) for f in functions]
    rows += [(f.name + ":sync", "sync") for f in functions if f.kind == "coll"]
    return rows
