package children

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	appv1 "deployobject.dev/controller/pkg/apis/app/v1"
	"deployobject.dev/controller/pkg/identity"
)

// SyncOptional brings a child that exists only when the spec asks for
// it (want) in line with desired, as Sync does. When the spec does not
// ask for it, the child dobj controls is deleted, with a UID precondition so
// that one someone else made meanwhile under the same name is not touched;
// one that dobj does not control is none of its business.
func SyncOptional[T metav1.Object](ctx context.Context, dobj *appv1.DeployObject, want bool, desired T, ops Ops[T]) (T, string, error) {
	return SyncOptionalNamed(ctx, dobj, dobj.Name, want, desired, ops)
}

// SyncOptionalNamed is SyncOptional for a child named name rather than
// like dobj.
func SyncOptionalNamed[T metav1.Object](ctx context.Context, dobj *appv1.DeployObject, name string, want bool, desired T, ops Ops[T]) (T, string, error) {
	var zero T
	if want {
		return Sync(ctx, dobj, desired, ops)
	}
	live, err := ops.Cached(name)
	if apierrors.IsNotFound(err) || (err == nil && !metav1.IsControlledBy(live, dobj)) {
		return zero, "", nil
	}
	if err != nil {
		return zero, "", fmt.Errorf("reading %s from cache: %w", ops.Kind, err)
	}
	uid := live.GetUID()
	err = ops.Delete(ctx, live.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return zero, "", fmt.Errorf("deleting %s %s: %w", ops.Kind, live.GetName(), err)
	}
	return zero, "deleted " + ops.Kind + " " + live.GetName(), nil
}

// Client is the typed client of one kind of child.
type Client[T metav1.Object] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
	Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)
	Delete(context.Context, string, metav1.DeleteOptions) error
}

// UpdatedOps are the Ops of a child kind whose owned fields are
// few and whose live objects are brought in line by an update: merge returns
// live with the owned fields of desired, and whether that changed anything.
func UpdatedOps[T metav1.Object](kind string, cached func(string) (T, error), client Client[T], merge func(live, desired T) (T, bool), recheckOwner func(context.Context) error) Ops[T] {
	return Ops[T]{
		Kind:   kind,
		Cached: cached,
		Create: client.Create,
		Get:    client.Get,
		Patch:  client.Patch,
		Delete: client.Delete,
		InSync: func(live, desired T) bool {
			_, changed := merge(live, desired)
			return !changed
		},
		Write: func(ctx context.Context, live, desired T) (T, error) {
			merged, _ := merge(live, desired)
			return client.Update(ctx, merged, metav1.UpdateOptions{FieldManager: identity.FieldManager})
		},
		RecheckOwner: recheckOwner,
	}
}

// Ops are the reads and writes Sync needs for one kind of child.
type Ops[T metav1.Object] struct {
	Kind   string
	Cached func(name string) (T, error)
	Create func(context.Context, T, metav1.CreateOptions) (T, error)
	Get    func(context.Context, string, metav1.GetOptions) (T, error)
	Patch  func(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)
	// delete removes a child the spec no longer asks for; only optional
	// children have it.
	Delete func(context.Context, string, metav1.DeleteOptions) error
	// inSync reports whether live is in line with desired. It needs only
	// what the cache keeps of live, and may find more in a live object read
	// from the API server.
	InSync func(live, desired T) bool
	// write brings live, just read from the API server, in line with
	// desired.
	Write func(ctx context.Context, live, desired T) (T, error)
	// recheckOwner confirms that the DeployObject may adopt an orphan.
	RecheckOwner func(context.Context) error
}

// Sync makes the child named like dobj match desired in the fields the
// controller owns. It creates the child when it does not exist, adopts an
// orphan that carries dobj's labels, refuses to touch one that another
// controller or nobody with those labels owns, and otherwise updates it only
// when an owned field differs. It returns the child as it is afterwards and a
// description of the write it made, if any.
func Sync[T metav1.Object](ctx context.Context, dobj *appv1.DeployObject, desired T, ops Ops[T]) (T, string, error) {
	var zero T
	name := desired.GetName()
	// fresh: live was just read from the API server, not from the cache.
	fresh := false
	live, err := ops.Cached(name)
	if apierrors.IsNotFound(err) {
		created, err := ops.Create(ctx, desired, metav1.CreateOptions{FieldManager: identity.FieldManager})
		if err == nil {
			return created, "created " + ops.Kind + " " + name, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return zero, "", fmt.Errorf("creating %s %s: %w", ops.Kind, name, err)
		}
		// It exists but is not in the cache: either the cache lags behind
		// (it is ours) or it lacks the managed-by label (it may be someone
		// else's). Only the live object can tell.
		if live, err = ops.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return zero, "", fmt.Errorf("reading %s %s: %w", ops.Kind, name, err)
		}
		fresh = true
	} else if err != nil {
		return zero, "", fmt.Errorf("reading %s %s from cache: %w", ops.Kind, name, err)
	}

	var adopted string
	if !metav1.IsControlledBy(live, dobj) {
		if !adoptable(live, dobj) {
			return zero, "", conflictOf(ops.Kind, live, dobj)
		}
		if err := ops.RecheckOwner(ctx); err != nil {
			return zero, "", err
		}
		patch, err := adoptionPatch(live, dobj)
		if err != nil {
			return zero, "", err
		}
		// The patch carries the resourceVersion the decision was made on:
		// had the child changed meanwhile, it fails with a conflict and the
		// next sync decides again.
		if live, err = ops.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: identity.FieldManager}); err != nil {
			return zero, "", fmt.Errorf("adopting %s %s: %w", ops.Kind, name, err)
		}
		fresh = true
		adopted = "adopted " + ops.Kind + " " + name
	}
	if ops.InSync(live, desired) {
		return live, adopted, nil
	}
	if !fresh {
		// The cache holds only the fields the controller reads (see
		// pkg/caches/transform.go); an update must carry everything else unchanged,
		// so it starts from the live object.
		if live, err = ops.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return zero, "", fmt.Errorf("reading %s %s: %w", ops.Kind, name, err)
		}
		if !metav1.IsControlledBy(live, dobj) {
			return zero, "", conflictOf(ops.Kind, live, dobj)
		}
		// The live object may show what the cache cannot: that an earlier
		// write, whose record was lost, already brought it in line.
		if ops.InSync(live, desired) {
			return live, adopted, nil
		}
	}
	updated, err := ops.Write(ctx, live, desired)
	if err != nil {
		return zero, "", fmt.Errorf("updating %s %s: %w", ops.Kind, name, err)
	}
	return updated, joinActions(adopted, "updated "+ops.Kind+" "+name), nil
}

// AppendAction adds action, if any, to the descriptions of a sync's writes.
func AppendAction(actions []string, action string) []string {
	if action == "" {
		return actions
	}
	return append(actions, action)
}

func joinActions(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// DynamicClient is the Client of a kind of child held as unstructured
// objects, through the dynamic client, whose methods also take
// subresources.
type DynamicClient struct {
	dynamic.ResourceInterface
}

func (c DynamicClient) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	return c.ResourceInterface.Create(ctx, obj, opts)
}

func (c DynamicClient) Get(ctx context.Context, name string, opts metav1.GetOptions) (*unstructured.Unstructured, error) {
	return c.ResourceInterface.Get(ctx, name, opts)
}

func (c DynamicClient) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions) (*unstructured.Unstructured, error) {
	return c.ResourceInterface.Update(ctx, obj, opts)
}

func (c DynamicClient) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.ResourceInterface.Delete(ctx, name, opts)
}

var _ Client[*unstructured.Unstructured] = DynamicClient{}
