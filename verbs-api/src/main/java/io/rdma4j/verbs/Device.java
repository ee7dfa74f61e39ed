package io.rdma4j.verbs;

import io.rdma4j.bindings.shim.Errno;
import io.rdma4j.bindings.shim.ExportedVerbs;
import io.rdma4j.bindings.shim.NativeLibraries;
import io.rdma4j.bindings.shim.Pointers;
import io.rdma4j.bindings.verbs.RdmaCore;
import io.rdma4j.bindings.verbs.ibv_device;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * An RDMA device as listed by {@code ibv_get_device_list}: a value (name, GUID, node type, transport), not an open
 * handle. {@link #open()} opens it ({@code ibv_open_device}) and returns the {@link Context} through which
 * everything else is done.
 *
 * <p>Immutable and thread-safe. Since the list is only a snapshot, a device can disappear before it is opened;
 * {@link #open()} then throws.
 *
 * @param name      the kernel's name for it, e.g. {@code mlx5_0}, {@code rxe0}, {@code siw0}
 * @param guid      the node GUID in host byte order ({@code ibv_get_device_guid} is big-endian)
 * @param nodeType  what kind of node it is
 * @param transport InfiniBand (also RoCE) or iWARP
 */
public record Device(String name, long guid, NodeType nodeType, Transport transport) {

    /**
     * What protects registered memory when this process forks ({@code ibv_is_fork_initialized}), once rdma4j has set
     * it up before its first verb (calling {@code ibv_fork_init()} where the kernel does not copy registered pages
     * for a child itself; {@code -Drdma4j.forkInit=false} leaves it off).
     *
     * @throws UnsatisfiedLinkError if rdma-core's libraries are not installed (the message names the packages)
     */
    public static ForkSafety forkSafety() {
        return ForkSafety.of(NativeLibraries.forkStatus());
    }

    /**
     * Lists the RDMA devices of this machine ({@code ibv_get_device_list}). A kernel without the RDMA user-verbs
     * interface has no devices: the list is empty then.
     *
     * @throws UnsatisfiedLinkError if rdma-core's libraries are not installed (the message names the packages)
     * @throws VerbException        if listing fails for another reason
     */
    public static List<Device> list() {
        return withDeviceList(devices -> {
            List<Device> result = new ArrayList<>(devices.size());
            for (MemorySegment d : devices) {
                result.add(of(d));
            }
            return List.copyOf(result);
        });
    }

    /**
     * The device called {@code name}, if there is one.
     *
     * @throws VerbException as {@link #list()}
     */
    public static Optional<Device> byName(String name) {
        return list().stream().filter(d -> d.name.equals(name)).findFirst();
    }

    /**
     * Opens the device ({@code ibv_open_device}).
     *
     * @throws IllegalStateException if the device is gone
     * @throws VerbException         if the device cannot be opened (errno from the verb)
     */
    public Context open() {
        return withDeviceList(devices -> {
            for (MemorySegment d : devices) {
                MemorySegment dev = Pointers.sized(d, ibv_device.layout().byteSize());
                if (ibv_device.name(dev).getString(0).equals(name)) {
                    MemorySegment state = Errno.state();
                    MemorySegment context = ExportedVerbs.ibv_open_device(state, d);
                    if (context.address() == 0) {
                        throw VerbException.of("ibv_open_device", Errno.get(state), "device " + name);
                    }
                    return new Context(this, context);
                }
            }
            throw new IllegalStateException("RDMA device " + name + " is no longer present");
        });
    }

    /** The device a {@code struct ibv_device} pointer describes. */
    static Device of(MemorySegment device) {
        MemorySegment dev = Pointers.sized(device, ibv_device.layout().byteSize());
        return new Device(ibv_device.name(dev).getString(0), Long.reverseBytes(RdmaCore.ibv_get_device_guid(device)),
                CValue.of(NodeType.class, ibv_device.node_type(dev)),
                CValue.of(Transport.class, ibv_device.transport_type(dev)));
    }

    /** Gets the device list, gives {@code use} its entries, frees it. */
    private static <T> T withDeviceList(Function<List<MemorySegment>, T> use) {
        NativeLibraries.require();
        MemorySegment state = Errno.state();
        MemorySegment list = ExportedVerbs.ibv_get_device_list(state, MemorySegment.NULL);
        if (list.address() == 0) {
            int errno = Errno.get(state);
            if (errno == RdmaCore.ENOSYS()) {
                // No uverbs ABI in the kernel (no /sys/class/infiniband_verbs): no devices, as ibv_devices shows.
                return use.apply(List.of());
            }
            throw VerbException.of("ibv_get_device_list", errno);
        }
        try {
            List<MemorySegment> devices = new ArrayList<>();
            MemorySegment array = Pointers.sized(list, Long.MAX_VALUE);
            for (long i = 0; ; i++) {
                MemorySegment d = array.getAtIndex(ValueLayout.ADDRESS, i);
                if (d.address() == 0) {
                    break;
                }
                devices.add(d);
            }
            return use.apply(devices);
        } finally {
            RdmaCore.ibv_free_device_list(list);
        }
    }
}
